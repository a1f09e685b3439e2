import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { Migration } from "kysely/migration";

// The commit fence's plain append as one server-side call on PostgreSQL.
// SQLite has no server to send anything to (its commit is already one synchronous call in process),
// so this migration does nothing there.
//
// One call takes a BATCH of appends (each for its own thread) and runs them in one transaction: the
// group commit of a database, done one level up. Appends that reach the store in the same event-loop
// turn (a worker process runs many sessions at once) share one round trip, one transaction and one
// WAL flush, instead of paying each for itself. Each append is still checked and written exactly as
// alone; one that does not qualify is skipped and reported, never written in part.
//
// Why a function and not one statement of CTEs: the checks must come after the row locks and before
// any write, in that order, and plpgsql states that order plainly (each statement of the body sees
// the effects and holds the locks of the ones before it). It is called as one autocommit statement:
// one round trip, one transaction, the same locks in the same order per append (thread, run,
// session) as every other writer of those rows; the caller sends appends sorted by thread id, so two
// batches lock threads in one global order and never wait on each other in a cycle.
//
// The call only ever appends. Whenever anything differs from what the caller expected — no such
// rows, the run not claimed by this owner at this epoch with a live lease, the thread not at the
// expected version, the operation id already used, or the session projection not the one the caller
// computed its new projection from — that append writes nothing and its row says why; the caller
// then decides it the general way (`decideCommit` after the locks, in
// `PostgresDispatchStore.commitLocked`), which also handles duplicates and rejections. So every
// outcome the function produces is one `decideCommit` would produce from the same locked rows; it is
// only faster at the one outcome that matters most. An error (e.g. a unique violation from a
// concurrent same-id commit) rolls the whole batch back, and the caller decides each append alone.
//
// Parameters are parallel arrays, one element per append (1-based index i), plus the facts of all
// appends flattened, each tagged with its append's index; `p_now` is the batch's one clock reading.
const CREATE_FUNCTION = sql`
create or replace function awaken_commit_append_v1(
  p_now bigint,
  p_run text[], p_thread text[], p_op text[], p_hash text[], p_receipt text[],
  p_owner text[], p_epoch bigint[], p_expected bigint[],
  p_seen_status text[], p_seen_pending text[], p_seen_usage text[],
  p_status text[], p_pending text[], p_usage text[], p_run_state text[],
  f_append int[], f_seq bigint[], f_id text[], f_type text[], f_body text[])
returns table (o_index int, o_outcome text, o_status text, o_pending_json text, o_usage_json text)
language plpgsql as $fn$
declare
  l record;
  i int;
  appended_facts int;
  -- The facts of append i are f_*[first .. last] (they come grouped by append, in order).
  first int := 1;
  last int := 0;
  fact_count int := coalesce(array_length(f_append, 1), 0);
begin
  for i in 1 .. coalesce(array_length(p_op, 1), 0) loop
    o_index := i;
    first := last + 1;
    while last < fact_count and f_append[last + 1] = i loop
      last := last + 1;
    end loop;
    -- The operation row is not locked (it may not exist): a same-id commit that lands after this
    -- read runs into its primary key at the insert below, and the batch rolls back.
    select t.version, r.state, r.owner, r.epoch, r.lease_expires_at, r.crash_count, r.session_id,
        s.status, s.pending_json, s.usage_json, c.op_id as used_op
      into l
      from threads t
      join runs r on r.id = p_run[i]
      join sessions s on s.id = r.session_id
      left join commit_operations c on c.op_id = p_op[i]
      where t.id = p_thread[i]
      for update of t, r, s;
    if not found
        or l.state <> 'claimed' or l.owner is distinct from p_owner[i] or l.epoch <> p_epoch[i]
        or l.lease_expires_at is null or l.lease_expires_at <= p_now
        or l.version <> p_expected[i]
        or l.used_op is not null then
      o_outcome := 'decide'; o_status := null; o_pending_json := null; o_usage_json := null;
      return next;
      continue;
    end if;
    -- The new projection and the run's settled state were computed from these three columns.
    if l.status <> p_seen_status[i] or l.pending_json <> p_seen_pending[i] or l.usage_json <> p_seen_usage[i] then
      o_outcome := 'projection_moved'; o_status := l.status; o_pending_json := l.pending_json;
      o_usage_json := l.usage_json;
      return next;
      continue;
    end if;
    insert into events (thread_id, seq, id, session_id, type, body_json, created_at)
      select p_thread[i], f.seq, f.id, l.session_id, f.type, f.body_json, p_now
      from unnest(f_seq[first:last], f_id[first:last], f_type[first:last], f_body[first:last])
        as f(seq, id, type, body_json);
    get diagnostics appended_facts = row_count;
    if appended_facts > 0 then
      update threads set version = p_expected[i] + appended_facts where id = p_thread[i];
      update sessions set status = p_status[i], pending_json = p_pending[i], usage_json = p_usage[i],
          updated_at = p_now
        where id = l.session_id;
    end if;
    if p_run_state[i] is not null then
      update runs set state = p_run_state[i], owner = null, lease_expires_at = null, crash_count = 0,
          available_at = p_now, updated_at = p_now
        where id = p_run[i];
    elsif l.crash_count <> 0 then
      -- Progress resets the crash budget; a run with no crash to forget is left untouched.
      update runs set crash_count = 0, updated_at = p_now where id = p_run[i];
    end if;
    insert into commit_operations (op_id, run_id, payload_hash, receipt_json, committed_at)
      values (p_op[i], p_run[i], p_hash[i], p_receipt[i], p_now);
    o_outcome := 'appended'; o_status := p_status[i]; o_pending_json := p_pending[i];
    o_usage_json := p_usage[i];
    return next;
  end loop;
end
$fn$`;

export const commitAppendFunction: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await CREATE_FUNCTION.execute(db);
  },
};
