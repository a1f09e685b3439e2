import type { SkillStore } from "../../resources/skills/ports.js";
import type { Db, SqlDialect } from "./db.js";

export class SqlSkillStore implements SkillStore {
  readonly family = "skills" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}
}
