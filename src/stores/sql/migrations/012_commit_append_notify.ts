import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { Migration } from "kysely/migration";

// `awaken_commit_append_v3`: `awaken_commit_append_v2` (migration 007) with one addition, the
// wake notification. Each append may carry `notify`, the payload of the wake signal its commit
// causes, and the call passes the channel (`p_channel`, null for none): the function notifies it
// for every append it writes, so a commit costs no separate `pg_notify` statement and other
// replicas hear of it exactly when it commits (NOTIFY inside a transaction is delivered on
// commit, and not at all on rollback). Everything else is 007's, statement for statement (a
// migration is a snapshot, hence the copy). v2 stays: a replica of the previous version keeps
// calling it during a rolling upgrade.
const CREATE_FUNCTION = sql`
create or replace function awaken_commit_append_v3(
  p_now bigint, p_count int, p_appends jsonb, p_facts jsonb, p_channel text)
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
        u.seen_status, u.seen_pending, u.seen_usage, u.run_state, u.progress,
        t.version, r.state, r.owner, r.epoch, r.lease_expires_at, r.crash_count, r.session_id,
        s.status, s.pending_json, s.usage_json, c.op_id as used_op
      from jsonb_to_recordset(p_appends) as u(i int, thread text, run text, op text, owner text,
          epoch bigint, expected bigint, seen_status text, seen_pending text, seen_usage text,
          run_state text, progress boolean)
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
    -- Progress resets the crash budget; a run with no crash to forget is left untouched. An
    -- append without \`progress\` (from a replica older than migration 007) counts as progress, as
    -- every append did before.
    resets[l.i] := l.crash_count <> 0 and l.run_state is null and coalesce(l.progress, true);
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
  -- The wake notification of each written append; PostgreSQL delivers it when (and only if) the
  -- transaction commits.
  if p_channel is not null then
    perform pg_notify(p_channel, u.notify)
      from jsonb_to_recordset(p_appends) as u(i int, notify text)
      where ok[u.i] and u.notify is not null;
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

export const commitAppendNotify: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await CREATE_FUNCTION.execute(db);
  },
};
