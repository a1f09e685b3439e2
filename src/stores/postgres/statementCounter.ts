import { writeFileSync } from "node:fs";

/**
 * Counts what the pool sends, for the turn benchmark (opt-in, off in production): statements by
 * kind, whether each was a named prepared statement, and round trips, a round trip being a
 * statement sent while its connection had nothing outstanding (statements pipelined behind it
 * share its wait).
 */
export class StatementCounter {
  statements = 0;
  roundTrips = 0;
  named = 0;
  readonly kinds = new Map<string, number>();
  private snapshots = 0;
  /** Statement texts are few and repeat, so each is labelled once rather than on every call. */
  private readonly kindOf = new Map<string, string>();

  record(text: string, named: boolean, startsRoundTrip: boolean): void {
    this.statements += 1;
    if (named) this.named += 1;
    if (startsRoundTrip) this.roundTrips += 1;
    let kind = this.kindOf.get(text);
    if (kind === undefined) {
      kind = statementKind(text);
      if (this.kindOf.size < 10_000) this.kindOf.set(text, kind);
    }
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  }

  /** Writes the counts so far to `file` as JSON (atomically enough for a reader polling `seq`). */
  writeTo(file: string): void {
    this.snapshots += 1;
    const body = {
      seq: this.snapshots,
      statements: this.statements,
      roundTrips: this.roundTrips,
      named: this.named,
      kinds: Object.fromEntries(this.kinds),
    };
    writeFileSync(file, JSON.stringify(body));
  }
}

/** A short label for a statement: its verb and the first table (or function) it names. */
export function statementKind(text: string): string {
  const sql = text.replace(/\s+/g, " ").trim().toLowerCase();
  const verb = /^\w+/.exec(sql)?.[0] ?? "?";
  const table = (pattern: RegExp) => pattern.exec(sql)?.[1] ?? "?";
  // A NOTIFY of its own; a commit that carries its NOTIFY counts as the commit it is.
  if (sql.startsWith("select pg_notify(")) return "select pg_notify";
  if (verb === "insert") return `insert ${table(/^insert into "?(\w+)/)}`;
  if (verb === "update") return `update ${table(/^update "?(\w+)/)}`;
  if (verb === "delete") return `delete ${table(/^delete from "?(\w+)/)}`;
  if (verb === "select") return `select ${table(/\bfrom "?(\w+)/)}`;
  if (verb === "with")
    return `with … ${/\b(insert into|update|delete from) "?(\w+)/.exec(sql)?.slice(1).join(" ") ?? table(/\bfrom "?(\w+)/)}`;
  if (verb === "start") return "begin";
  return verb;
}
