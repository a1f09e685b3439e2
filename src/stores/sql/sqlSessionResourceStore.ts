import type { SessionResourceStore } from "../../resources/sessionResources/ports.js";
import type { Db, SqlDialect } from "./db.js";

export class SqlSessionResourceStore implements SessionResourceStore {
  readonly family = "sessionResources" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}
}
