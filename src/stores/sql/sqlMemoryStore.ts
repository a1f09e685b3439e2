import type { MemoryStore } from "../../resources/memory/ports.js";
import type { Db, SqlDialect } from "./db.js";

export class SqlMemoryStore implements MemoryStore {
  readonly family = "memory" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}
}
