import { createHash } from "node:crypto";
import type { CommitRow } from "../sql/appendFacts.js";
import type { RunUpdate } from "../sql/runWrites.js";
import type { Database } from "../sql/schema.js";
import type { CarriedNotices } from "./commitNotices.js";

/**
 * PostgreSQL's executor of a write plan: ONE statement that writes the plan's rows only if what
 * the decision read still holds, and otherwise writes nothing. Its data-modifying CTEs run exactly
 * once, against one snapshot, each gated on `ok`:
 * - the locks (`SELECT … FOR UPDATE` / `FOR SHARE` of the rows the decision read, with the values
 *   it read in their WHERE: PostgreSQL re-checks a locked row's latest version, so a row that
 *   moved returns nothing) and the guards (plain conditions) make the gate;
 * - with facts, the commit row is inserted `ON CONFLICT DO NOTHING`: the primary key (thread,
 *   base version) refuses a second commit at one version (a retried operation's included),
 *   whatever the snapshot saw; `ok` is then whether the row went in;
 * - the run, session and operation writes follow `ok`, and so does the wake NOTIFY (delivered only
 *   if the transaction commits).
 * The answer is `ok`: 1 written, 0 nothing written (the caller reads and decides again). No error
 * is raised on purpose and none is caught to choose a path. Texts take few shapes, each prepared
 * once per connection under a name derived from the text.
 */
export interface CasPlan {
  /** CTE bodies that must each return a row: `select … for update` of what the decision read. */
  locks: string[];
  /** SQL conditions that must hold (read at the statement's snapshot). */
  guards: string[];
  row: CommitRow | null;
  operation: Database["commit_operations"] | null;
  runInserts: readonly Database["runs"][];
  /** Child threads a fenced commit spawns: each one's row, first commit and run, after `ok`. */
  spawns?: readonly { thread: Database["threads"]; commit: CommitRow; run: Database["runs"] }[];
  /**
   * A child's answer on its parent's history and the resume: inserted before the commit row, and
   * the rest gated on it, so a parent commit that took the same version meanwhile leaves the whole
   * statement unwritten (`ok` 0) and the caller reads and decides again.
   */
  answer?: { row: CommitRow; resume: RunUpdate | null } | null;
  runUpdate: RunUpdate | null;
  session: { id: string; set: Record<string, unknown> } | null;
  notice: CarriedNotices | null;
}

export interface CasStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** The SQL type of each column a plan writes, so parameters compare and insert as they must. */
const TYPES: Record<string, string> = {
  base_version: "bigint",
  version: "bigint",
  created_at: "bigint",
  committed_at: "bigint",
  epoch: "bigint",
  lease_expires_at: "bigint",
  available_at: "bigint",
  crash_count: "bigint",
  updated_at: "bigint",
  archived_at: "bigint",
  deleted_at: "bigint",
  agent_version: "bigint",
  environment_revision: "bigint",
};

/** A written column's SQL type, for the cast its parameter needs in an `insert … select`. */
export const columnType = (column: string): string => TYPES[column] ?? "text";
const typeOf = columnType;

/** Builds the statement; `$` is a placeholder builder shared with the caller's lock texts. */
export function casStatement(plan: CasPlan, $: (value: unknown) => string, values: unknown[]): CasStatement {
  const ctes: string[] = plan.locks.map((body, i) => `l${i} as (${body})`);
  const gate = [...plan.locks.map((_, i) => `exists (select 1 from l${i})`), ...plan.guards];
  ctes.push(`g as (select 1 as one where ${gate.length > 0 ? gate.join(" and ") : "true"})`);
  let ok = "g";
  if (plan.answer) {
    // The parent's version first: taken meanwhile (its own commit won), nothing below is written.
    ctes.push(
      `pa as (${insertSelect("commits", plan.answer.row, $, ok)} on conflict do nothing returning 1)`,
    );
    ok = "pa";
  }
  if (plan.row) {
    ctes.push(`c as (${insertSelect("commits", plan.row, $, ok)} on conflict do nothing returning 1)`);
    ok = "c";
  }
  if (plan.operation) {
    ctes.push(
      `o as (${insertSelect("commit_operations", plan.operation, $, ok)} on conflict do nothing returning 1)`,
    );
    ok = "o";
  }
  const after = `exists (select 1 from ${ok})`;
  plan.runInserts.forEach((run, i) => {
    ctes.push(`ri${i} as (${insertSelect("runs", run, $, ok)})`);
  });
  (plan.spawns ?? []).forEach((spawn, i) => {
    // Foreign keys are checked at the statement's end, so the three may share it in any order.
    ctes.push(`st${i} as (${insertSelect("threads", spawn.thread, $, ok)})`);
    ctes.push(`sc${i} as (${insertSelect("commits", spawn.commit, $, ok)})`);
    ctes.push(`sr${i} as (${insertSelect("runs", spawn.run, $, ok)})`);
  });
  if (plan.answer?.resume) ctes.push(`pr as (${runUpdateSql(plan.answer.resume, $)} and ${after})`);
  if (plan.runUpdate) ctes.push(`ru as (${runUpdateSql(plan.runUpdate, $)} and ${after})`);
  if (plan.session) {
    const set = Object.entries(plan.session.set).map(([k, v]) => `${k} = ${$(v)}::${typeOf(k)}`);
    ctes.push(`su as (update sessions set ${set.join(", ")} where id = ${$(plan.session.id)} and ${after})`);
  }
  let notified = "";
  if (plan.notice) {
    ctes.push(
      `nf as (select pg_notify(${$(plan.notice.channel)}, p) from unnest(${$(plan.notice.payloads)}::text[]) as p where ${after})`,
    );
    notified = ", (select count(*) from nf)::int as notified";
  }
  const text = `with ${ctes.join(", ")} select (select count(*) from ${ok})::int as ok${notified}`;
  return { name: `awaken_cas_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`, text, values };
}

/** `insert into table (columns) select $…::type, … from source`: one row, written only if source has one. */
function insertSelect(table: string, row: object, $: (value: unknown) => string, source: string): string {
  const entries = Object.entries(row);
  const columns = entries.map(([k]) => k).join(", ");
  const selected = entries.map(([k, v]) => `${$(v)}::${typeOf(k)}`).join(", ");
  return `insert into ${table} (${columns}) select ${selected} from ${source}`;
}

/**
 * A run UPDATE of a write plan as SQL text, its WHERE open for the gate. Its columns are the
 * plan's, so the text takes one shape per rule (settle, crash reset, claim, cancel, resume).
 */
export function runUpdateSql(update: RunUpdate, $: (value: unknown) => string): string {
  const set = Object.entries(update.set).map(
    ([column, value]) => `${column} = ${$(value)}::${typeOf(column)}`,
  );
  const crashed = update.onlyIfCrashed ? " and crash_count <> 0" : "";
  const epoch = update.ifEpoch !== null ? ` and epoch = ${$(update.ifEpoch)}::bigint` : "";
  return `update runs set ${set.join(", ")} where id = ${$(update.id)}${crashed}${epoch}`;
}

/** Numbered placeholders: `$(value)` appends a value and returns its placeholder. */
export function placeholders(): { $: (value: unknown) => string; values: unknown[] } {
  const values: unknown[] = [];
  return {
    $: (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    },
    values,
  };
}
