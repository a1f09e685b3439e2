import type pg from "pg";
import type { InputContext } from "../../coordinator/ports.js";
import type { InputWrites } from "../sql/inputWrites.js";
import type { Database } from "../sql/schema.js";
import { rowToSession } from "../sql/sessionRows.js";
import { ACTIVE_RUN_STATES, MODEL_REQUEST_TYPES, openRequestFrom } from "../sql/sqlInputLedger.js";
import type { CarriedNotices } from "./commitNotices.js";

/**
 * The input append's one-call path (migration 015's `awaken_input_append_v1`): one plain read of
 * everything `decide` needs, then one call that locks, checks nothing moved and executes the plan.
 * Both are named statements, and neither needs BEGIN or COMMIT.
 */

/**
 * $1 session id, $2 the active states, $3 the model request span types. One snapshot: the session
 * row and its version (`xmin`), the thread's version, the newest active run and, only when that run
 * is claimed, the thread's last model request span (an open request the input must close).
 */
const READ = {
  name: "awaken_input_read_v1",
  text: `select s.*, s.xmin::text as row_version, t.version as thread_version,
      r.id as run_id, r.state as run_state, r.epoch as run_epoch,
      o.id as open_id, o.type as open_type, o.body_json as open_body
    from sessions s
    join threads t on t.id = s.thread_id
    left join lateral (select id, state, epoch from runs
        where session_id = s.id and state = any($2::text[]) order by created_at desc limit 1) r on true
    left join lateral (select id, type, body_json from events
        where r.state = 'claimed' and thread_id = s.thread_id and type = any($3::text[])
        order by seq desc limit 1) o on true
    where s.id = $1 and s.deleted_at is null`,
} as const;

/** $1 session, $2 thread, $3 what the decision saw, $4 the plan, $5 now, $6 the NOTIFY channel. */
const APPEND = {
  name: "awaken_input_append_v1",
  text: "select outcome from awaken_input_append_v1($1, $2, $3::jsonb, $4::jsonb, $5, $6) as outcome",
} as const;

type ReadRow = Database["sessions"] & {
  row_version: string;
  thread_version: string | number;
  run_id: string | null;
  run_state: string | null;
  run_epoch: string | number | null;
  open_id: string | null;
  open_type: string | null;
  open_body: string | null;
};

/** What the read saw: the decision's context, and what the call must find unchanged. */
export interface InputRead {
  ctx: InputContext;
  row: Database["sessions"];
  version: number;
  seen: { version: number; row_version: string; run: { id: string; state: string; epoch: number } | null };
}

/** Reads what an append decides on; null when the session does not exist (or was deleted). */
export async function readForInput(pool: pg.Pool, sessionId: string): Promise<InputRead | null> {
  const { rows } = await pool.query<ReadRow>({
    ...READ,
    values: [sessionId, [...ACTIVE_RUN_STATES], [...MODEL_REQUEST_TYPES]],
  });
  const row = rows[0];
  if (!row) return null;
  const activeRun =
    row.run_id !== null && row.run_state !== null
      ? { id: row.run_id, state: row.run_state, epoch: Number(row.run_epoch) }
      : null;
  const openModelRequest =
    row.open_id !== null && row.open_type !== null && row.open_body !== null
      ? openRequestFrom({ id: row.open_id, type: row.open_type, body_json: row.open_body })
      : null;
  const version = Number(row.thread_version);
  return {
    ctx: { session: rowToSession(row), activeRun, openModelRequest },
    row,
    version,
    seen: { version, row_version: row.row_version, run: activeRun },
  };
}

/** The function's plan argument: `planInputWrites`'s rows and changes, as they are. */
export function inputPlanArgument(writes: InputWrites, notice: CarriedNotices | null): unknown {
  const update = writes.runs.update;
  return {
    events: writes.facts.committed.map((f, i) => ({
      seq: f.seq,
      id: f.id,
      type: f.type,
      body: writes.facts.events[i]?.body_json,
    })),
    version: writes.facts.version ? { from: writes.facts.version.from, to: writes.facts.version.to } : null,
    session: writes.session,
    run_inserts: writes.runs.inserts,
    run_update: update
      ? { id: update.id, set: update.set, only_if_crashed: update.onlyIfCrashed, if_epoch: update.ifEpoch }
      : null,
    receipt: writes.receipt,
    notify: notice?.payloads ?? [],
  };
}

/** The call's answer: written, something the decision read moved, or the session is gone. */
export type InputCallOutcome = "appended" | "moved" | "missing";

export async function callInputAppend(
  pool: pg.Pool,
  args: {
    sessionId: string;
    threadId: string;
    seen: InputRead["seen"];
    plan: unknown;
    now: number;
    channel: string | null;
  },
): Promise<InputCallOutcome> {
  const { rows } = await pool.query<{ outcome: InputCallOutcome }>({
    ...APPEND,
    values: [
      args.sessionId,
      args.threadId,
      JSON.stringify(args.seen),
      JSON.stringify(args.plan),
      args.now,
      args.channel,
    ],
  });
  const outcome = rows[0]?.outcome;
  if (outcome !== "appended" && outcome !== "moved" && outcome !== "missing") {
    throw new Error(`awaken_input_append_v1 answered ${String(outcome)}`);
  }
  return outcome;
}
