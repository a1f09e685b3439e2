/**
 * The history invariants every fault test checks afterwards, read directly from the PostgreSQL
 * schema (not through the product): whatever crashed, stalled or was retried, committed history
 * must still be whole and unduplicated, and every run must have come to rest.
 */
import pg from "pg";

export interface HistoryReport {
  sessions: number;
  threads: number;
  events: number;
  runs: number;
  /** Broken rules, one line each; empty when history is sound. */
  violations: string[];
}

const RESTING_RUN_STATES = new Set(["done", "failed", "cancelled", "awaiting"]);

/**
 * Checks, in the schema `url` selects (`search_path`): per thread the facts hold seq 1..N with no
 * gap and N equals the thread's version; no event id appears twice; no two facts share a version;
 * every `span.model_request_start` is ended by exactly one `span.model_request_end` (and no end
 * names an unknown start); every run is terminal (`done`/`failed`/`cancelled`) or `awaiting`.
 */
export async function checkHistoryInvariants(url: string): Promise<HistoryReport> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const violations: string[] = [];
    const threads = await client.query<{ id: string; version: string }>(
      "select t.id, coalesce((select max(c.version) from commits c where c.thread_id = t.id), 0) as version from threads t",
    );
    const events = await client.query<{
      thread_id: string;
      seq: string;
      id: string;
      type: string;
      body_json: string;
    }>("select thread_id, seq, id, type, body_json from events order by thread_id, seq");
    const runs = await client.query<{ id: string; state: string }>("select id, state from runs");
    const sessions = await client.query<{ n: string }>("select count(*) as n from sessions");

    const byThread = new Map<string, number[]>();
    for (const row of events.rows) {
      const list = byThread.get(row.thread_id) ?? [];
      list.push(Number(row.seq));
      byThread.set(row.thread_id, list);
    }
    for (const thread of threads.rows) {
      const seqs = byThread.get(thread.id) ?? [];
      const version = Number(thread.version);
      const seen = new Set<number>();
      for (const seq of seqs) {
        if (seen.has(seq)) violations.push(`thread ${thread.id}: two facts at version ${seq}`);
        seen.add(seq);
      }
      for (let seq = 1; seq <= version; seq++)
        if (!seen.has(seq)) violations.push(`thread ${thread.id}: gap, no fact at seq ${seq}`);
      if (seqs.length !== version)
        violations.push(`thread ${thread.id}: version ${version} but ${seqs.length} facts`);
      byThread.delete(thread.id);
    }
    for (const orphan of byThread.keys()) violations.push(`events of unknown thread ${orphan}`);

    const ids = new Set<string>();
    const starts = new Map<string, number>();
    const ends: string[] = [];
    for (const row of events.rows) {
      if (ids.has(row.id)) violations.push(`event id ${row.id} appears twice`);
      ids.add(row.id);
      if (row.type === "span.model_request_start") starts.set(row.id, 0);
      if (row.type === "span.model_request_end") {
        const body = JSON.parse(row.body_json) as { model_request_start_id?: string };
        ends.push(String(body.model_request_start_id));
      }
    }
    for (const startId of ends) {
      const count = starts.get(startId);
      if (count === undefined) violations.push(`span end names unknown start ${startId}`);
      else starts.set(startId, count + 1);
    }
    for (const [startId, count] of starts)
      if (count !== 1) violations.push(`model request ${startId} ended ${count} times`);

    for (const run of runs.rows)
      if (!RESTING_RUN_STATES.has(run.state)) violations.push(`run ${run.id} is ${run.state}`);

    return {
      sessions: Number(sessions.rows[0]?.n ?? 0),
      threads: threads.rows.length,
      events: events.rows.length,
      runs: runs.rows.length,
      violations,
    };
  } finally {
    await client.end();
  }
}

/** Rows of one session's history straight from the schema, in order (type + id + body). */
export async function sessionFacts(
  url: string,
  sessionId: string,
): Promise<Array<{ seq: number; id: string; type: string; body: Record<string, unknown> }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ seq: string; id: string; type: string; body_json: string }>(
      "select seq, id, type, body_json from events where session_id = $1 order by seq",
      [sessionId],
    );
    return rows.map((r) => ({ seq: Number(r.seq), id: r.id, type: r.type, body: JSON.parse(r.body_json) }));
  } finally {
    await client.end();
  }
}
