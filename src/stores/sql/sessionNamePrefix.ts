import { type RawBuilder, type SqlBool, sql } from "kysely";

/**
 * Whether the session of the row in scope (`sessions as s`) is bound to a client name starting with
 * `prefix`: a semi-join on `session_names_target`, one index probe per session row. `substr`
 * compares exactly on both backends (a `like` would be case-insensitive on SQLite and would take
 * `%` and `_` in the prefix as wildcards; a range on `name` would follow PostgreSQL's collation).
 */
export function boundUnder(prefix: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from session_names n where n.target_id = s.id and n.workspace_id = s.workspace_id and n.space = 'session' and substr(n.name, 1, cast(${prefix.length} as integer)) = ${prefix})`;
}
