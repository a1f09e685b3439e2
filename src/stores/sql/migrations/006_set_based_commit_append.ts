import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { Migration } from "kysely/migration";

// The batch of plain appends (migration 005) decided and written set by set instead of append by
// append, with the batch sent as two JSON texts instead of 21 parallel arrays.
// Same checks, same locks in the same order, same outcomes as
// `awaken_commit_append_v1`; what changed is what each append costs the server and the client.
//
// Measured at concurrency 8 (bench/fence.mjs, 2 vCPUs): v1 ran five statements per append (lock
// read, events, thread, session, receipt), 1.67 ms of executor time for a batch of eight; this
// runs two statements per batch whatever its size:
//   1. ONE locking read for all appends, in the order given (the caller sorts them by thread id):
//      `ORDER BY` puts the sort below the row locks, so for each append in turn its thread, run and
//      session rows are locked, in that order, as every other writer locks them. The loop over its
//      rows checks each append exactly as v1 did and marks the ones to write.
//   2. ONE statement of data-modifying CTEs that writes the marked appends: their events, thread
//      versions, session projections and receipts. Every CTE runs once and to completion on rows
//      step 1 locked (or new rows). Settled runs and reset crash budgets, rarer, are separate
//      statements run only when some append needs them.
// On the client, one JSON.stringify per document replaces node-pg's array escaping of every body
// (which cost more than the rest of the commit's bookkeeping). Both documents are `jsonb`: parsed
// once when the call is bound, then read without parsing again (parsing was a fifth of the
// server's time for the call when they were `json`, read and so parsed once per use). Every text
// that must be stored exactly (a fact's body, a receipt, a projection column) travels as a JSON
// string holding JSON.stringify's output, so jsonb's normalisation never touches it: a body is
// stored exactly as the locked path stores it, and a lone surrogate or a NUL inside it is an
// escape sequence (\ud800) in that text, nothing the server has to decode. Only a raw id could
// still carry one; the server then refuses the whole call and the caller decides each append on
// the locked path. \`p_count\` is the number of appends.

// The function pins its planner settings. Its plans are cached per connection as generic plans
// (one plan for any batch); on tables without statistics yet (a new deployment, a new schema) the
// planner otherwise chose sequential scans and hash joins over every thread, run, session and
// receipt, a cost that grows with the tables until autovacuum analyzes them. Index lookups are
// right for a batch of a few dozen rows at any table size.
//
// v1 stays defined: a replica of the previous version, still running during a rolling upgrade,
// keeps calling it, and both take the same locks in the same order.
//
// Two appends of one thread in one batch would both be checked against the same locked version,
// so only the first of them is considered here and the second is left to the locked path, which
// waits for this transaction and then sees the first. (A run commits one operation after another,
// so a batch does not normally hold two; this keeps the function safe without relying on it.)
//
// Outcomes are reported only for appends that were written (`appended`) or whose session
// projection was not the one the caller computed from (`projection_moved`, with the columns found).
// An append that is not reported was not written, and the caller decides it the general way.
const CREATE_FUNCTION = sql`
create or replace function awaken_commit_append_v2(
  p_now bigint, p_count int, p_appends jsonb, p_facts jsonb)
returns table (o_index int, o_outcome text, o_status text, o_pending_json text, o_usage_json text)
language plpgsql
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
set plan_cache_mode = force_generic_plan
as $fn$
declare
  l record;
  n int := p_count;
  -- Indexed by append (1 .. n): whether it is written, its session and thread, whether its run's
  -- crash count resets.
  ok boolean[] := array_fill(false, array[n]);
  session_of text[] := array_fill(null::text, array[n]);
  thread_of text[] := array_fill(null::text, array[n]);
  resets boolean[] := array_fill(false, array[n]);
  locked_threads text[] := '{}';
  any_ok boolean := false;
  any_settled boolean := false;
  any_reset boolean := false;
begin
  -- The operation row is not locked (it may not exist): a same-id commit that lands after this
  -- read runs into its primary key when the receipts are inserted, and the batch rolls back.
  for l in
    select u.i, u.thread, u.owner as want_owner, u.epoch as want_epoch, u.expected,
        u.seen_status, u.seen_pending, u.seen_usage, u.run_state,
        t.version, r.state, r.owner, r.epoch, r.lease_expires_at, r.crash_count, r.session_id,
        s.status, s.pending_json, s.usage_json, c.op_id as used_op
      from jsonb_to_recordset(p_appends) as u(i int, thread text, run text, op text, owner text,
          epoch bigint, expected bigint, seen_status text, seen_pending text, seen_usage text,
          run_state text)
      join threads t on t.id = u.thread
      join runs r on r.id = u.run and r.thread_id = u.thread
      join sessions s on s.id = r.session_id
      left join commit_operations c on c.op_id = u.op
      order by u.i
      for update of t, r, s
  loop
    if l.thread = any(locked_threads)
        or l.state <> 'claimed' or l.owner is distinct from l.want_owner or l.epoch <> l.want_epoch
        or l.lease_expires_at is null or l.lease_expires_at <= p_now
        or l.version <> l.expected
        or l.used_op is not null then
      locked_threads := locked_threads || l.thread;
      continue;
    end if;
    locked_threads := locked_threads || l.thread;
    -- The new projection and the run's settled state were computed from these three columns.
    if l.status <> l.seen_status or l.pending_json <> l.seen_pending or l.usage_json <> l.seen_usage then
      o_index := l.i; o_outcome := 'projection_moved'; o_status := l.status;
      o_pending_json := l.pending_json; o_usage_json := l.usage_json;
      return next;
      continue;
    end if;
    ok[l.i] := true;
    session_of[l.i] := l.session_id;
    thread_of[l.i] := l.thread;
    -- Progress resets the crash budget; a run with no crash to forget is left untouched.
    resets[l.i] := l.crash_count <> 0 and l.run_state is null;
    any_reset := any_reset or resets[l.i];
    any_settled := any_settled or l.run_state is not null;
    any_ok := true;
  end loop;
  if not any_ok then
    return;
  end if;

  -- Each write reads what it needs straight from the batch (jsonb: no parsing again), filtered to
  -- the marked appends; \`n\` is how many facts an append carries (none: a settle-only commit,
  -- which moves neither the thread nor the projection).
  with
    ev as (
      insert into events (thread_id, seq, id, session_id, type, body_json, created_at)
        select thread_of[f.a], f.seq, f.id, session_of[f.a], f.type, f.body, p_now
          from jsonb_to_recordset(p_facts) as f(a int, seq bigint, id text, type text, body text)
          where ok[f.a]),
    th as (
      update threads t set version = u.expected + u.n
        from jsonb_to_recordset(p_appends) as u(i int, thread text, expected bigint, n bigint)
        where ok[u.i] and u.n > 0 and t.id = u.thread),
    se as (
      update sessions s set status = u.status, pending_json = u.pending, usage_json = u.usage,
          updated_at = p_now
        from jsonb_to_recordset(p_appends) as u(i int, n bigint, status text, pending text,
            usage text)
        where ok[u.i] and u.n > 0 and s.id = session_of[u.i])
  insert into commit_operations (op_id, run_id, payload_hash, receipt_json, committed_at)
    select u.op, u.run, u.hash, u.receipt, p_now
      from jsonb_to_recordset(p_appends) as u(i int, run text, op text, hash text, receipt text)
      where ok[u.i];

  -- Rarer writes, each only when some append needs it: runs that settle, and crash budgets that
  -- progress resets (a run with no crash to forget is left untouched).
  if any_settled then
    update runs r set state = u.run_state, owner = null, lease_expires_at = null, crash_count = 0,
        available_at = p_now, updated_at = p_now
      from jsonb_to_recordset(p_appends) as u(i int, run text, run_state text)
      where ok[u.i] and u.run_state is not null and r.id = u.run;
  end if;
  if any_reset then
    update runs r set crash_count = 0, updated_at = p_now
      from jsonb_to_recordset(p_appends) as u(i int, run text)
      where resets[u.i] and r.id = u.run;
  end if;

  o_outcome := 'appended'; o_status := null; o_pending_json := null; o_usage_json := null;
  for i in 1 .. n loop
    if ok[i] then
      o_index := i;
      return next;
    end if;
  end loop;
end
$fn$`;

export const setBasedCommitAppend: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await CREATE_FUNCTION.execute(db);
  },
};
