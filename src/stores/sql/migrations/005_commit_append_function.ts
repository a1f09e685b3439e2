import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

// The commit fence's plain append as one server-side call on PostgreSQL (issue 3, "Performance").
// SQLite has no server to send anything to (its commit is already one synchronous call in process),
// so this migration does nothing there.
//
// Why a function and not one statement of CTEs: the checks must come after the row locks and before
// any write, in that order, and plpgsql states that order plainly (each statement of the body sees
// the effects and holds the locks of the ones before it). It is called as one autocommit statement:
// one round trip, one transaction, the same locks in the same order (thread, run, session) as every
// other writer of those rows.
//
// The call only ever appends. Whenever anything differs from what the caller expected — no such
// rows, the run not claimed by this owner at this epoch with a live lease, the thread not at the
// expected version, the operation id already used, or the session projection not the one the caller
// computed its new projection from — it writes nothing and says so; the caller then decides the
// general way (`decideCommit` after the locks, in `PostgresDispatchStore.commitLocked`), which also
// handles duplicates and rejections. So every outcome the function produces is one `decideCommit`
// would produce from the same locked rows; it is only faster at the one outcome that matters most.
const CREATE_FUNCTION = sql`
create or replace function awaken_commit_append_v1(
  p_run text, p_thread text, p_op text, p_hash text, p_receipt text,
  p_owner text, p_epoch bigint, p_expected bigint, p_now bigint,
  p_seqs bigint[], p_ids text[], p_types text[], p_bodies text[],
  p_seen_status text, p_seen_pending text, p_seen_usage text,
  p_status text, p_pending text, p_usage text, p_run_state text)
returns table (o_outcome text, o_status text, o_pending_json text, o_usage_json text)
language plpgsql as $fn$
declare
  l record;
begin
  select t.version, r.state, r.owner, r.epoch, r.lease_expires_at, r.session_id,
      s.status, s.pending_json, s.usage_json
    into l
    from threads t
    join runs r on r.id = p_run
    join sessions s on s.id = r.session_id
    where t.id = p_thread
    for update of t, r, s;
  if not found
      or l.state <> 'claimed' or l.owner is distinct from p_owner or l.epoch <> p_epoch
      or l.lease_expires_at is null or l.lease_expires_at <= p_now
      or l.version <> p_expected
      or exists (select 1 from commit_operations c where c.op_id = p_op) then
    return query select 'decide'::text, null::text, null::text, null::text;
    return;
  end if;
  -- The new projection and the run's settled state were computed from these three columns.
  if l.status <> p_seen_status or l.pending_json <> p_seen_pending or l.usage_json <> p_seen_usage then
    return query select 'projection_moved'::text, l.status, l.pending_json, l.usage_json;
    return;
  end if;
  if cardinality(p_ids) > 0 then
    insert into events (thread_id, seq, id, session_id, type, body_json, created_at)
      select p_thread, f.seq, f.id, l.session_id, f.type, f.body_json, p_now
      from unnest(p_seqs, p_ids, p_types, p_bodies) as f(seq, id, type, body_json);
    update threads set version = p_expected + cardinality(p_ids) where id = p_thread;
    update sessions set status = p_status, pending_json = p_pending, usage_json = p_usage, updated_at = p_now
      where id = l.session_id;
  end if;
  if p_run_state is not null then
    update runs set state = p_run_state, owner = null, lease_expires_at = null, crash_count = 0,
        available_at = p_now, updated_at = p_now
      where id = p_run;
  else
    -- Progress resets the crash budget; a run with no crash to forget is left untouched (no write).
    update runs set crash_count = 0, updated_at = p_now where id = p_run and crash_count <> 0;
  end if;
  insert into commit_operations (op_id, run_id, payload_hash, receipt_json, committed_at)
    values (p_op, p_run, p_hash, p_receipt, p_now);
  return query select 'appended'::text, p_status, p_pending, p_usage;
end
$fn$`;

export const commitAppendFunction: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await CREATE_FUNCTION.execute(db);
  },
};
