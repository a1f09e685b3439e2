import { createHash } from "node:crypto";

const names = new Map<string, string>();
/** More distinct statement texts than the hot paths have shapes: a bound, not a working size. */
const MAX_NAMED_STATEMENTS = 500;
/** Only data statements are prepared: DDL and transaction control run unnamed, as pg sends them. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * The name under which a statement is prepared once per connection and then only bound and
 * executed: the server parses and plans it once instead of on every call (node-pg keeps the names
 * it prepared per connection). Named by a digest of the text, so one text has one name and two
 * texts never share one. Past the bound (a caller producing unbounded shapes), statements go
 * unnamed, so neither side's statement cache grows without limit.
 */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMED_STATEMENTS || !PREPARABLE.test(text)) return undefined;
    name = `awaken_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}
