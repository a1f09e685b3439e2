import type { FileStore } from "../../resources/files/ports.js";
import type { Db, SqlDialect } from "./db.js";

export class SqlFileStore implements FileStore {
  readonly family = "files" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}
}
