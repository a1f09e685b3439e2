import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { Migration } from "kysely/migration";

// `awaken_input_append_v1`: an input append (a user message, a confirmation, a custom tool result,
// an interrupt, a session update or archive) in one autocommit call. The caller read the session,
// its thread's version and its active run in one plain SELECT, decided in JavaScript and planned
// the writes with `planInputWrites` (stores/sql/inputWrites.ts, the one source of the rules); this
// function takes the locks the pipelined append takes, in its order (thread → session → active
// runs), checks that nothing the decision read has moved since (the thread's version, the session
// row's version — `xmin` changes with every UPDATE of the row —, the active run's id, state and
// epoch), and then executes the plan as given: the events, the thread's version move, the session
// columns, the runs it starts, the one change of the active run, the send receipt, and the wake
// NOTIFY (delivered on commit, not at all on rollback). It writes nothing and answers `moved` when
// anything moved, `missing` when the session is gone; the caller decides again on a fresh read.
//
// `p_seen`: {version, row_version, run: {id, state, epoch} | null}. `p_plan`: {events: [{seq, id,
// type, body}], version: {from, to} | null, session: {column: value} | null, run_inserts: [runs
// row], run_update: {id, set: {column: value}, only_if_crashed, if_epoch} | null, receipt:
// send_receipts row | null, notify: [payload]}. Column sets are the plan's: a key that is absent
// leaves its column as it is, a key with null writes NULL.
const CREATE_FUNCTION = sql`
create or replace function awaken_input_append_v1(
  p_session text, p_thread text, p_seen jsonb, p_plan jsonb, p_now bigint, p_channel text)
returns text
language plpgsql
set plan_cache_mode = force_generic_plan
as $fn$
declare
  v_version bigint;
  v_row_version text;
  v_run record;
  v_seen_run jsonb := p_seen->'run';
  v_session jsonb := p_plan->'session';
  v_update jsonb := p_plan->'run_update';
  v_set jsonb;
  v_receipt jsonb := p_plan->'receipt';
begin
  select t.version into v_version from threads t where t.id = p_thread for update;
  select s.xmin::text into v_row_version from sessions s
    where s.id = p_session and s.thread_id = p_thread and s.deleted_at is null for update;
  if v_version is null or v_row_version is null then
    return 'missing';
  end if;
  if v_version <> (p_seen->>'version')::bigint or v_row_version <> p_seen->>'row_version' then
    return 'moved';
  end if;
  -- Every active run is locked (as the pipelined append's FOR UPDATE does); the newest is the one
  -- the decision saw.
  perform 1 from runs r where r.session_id = p_session and r.state in ('queued', 'claimed', 'awaiting')
    for update;
  select r.id, r.state, r.epoch into v_run from runs r
    where r.session_id = p_session and r.state in ('queued', 'claimed', 'awaiting')
    order by r.created_at desc limit 1;
  if v_run.id is distinct from v_seen_run->>'id'
      or v_run.state is distinct from v_seen_run->>'state'
      or v_run.epoch is distinct from (v_seen_run->>'epoch')::bigint then
    return 'moved';
  end if;

  if p_plan->'version' <> 'null'::jsonb then
    insert into events (thread_id, seq, id, session_id, type, body_json, created_at)
      select p_thread, e.seq, e.id, p_session, e.type, e.body, p_now
        from jsonb_to_recordset(p_plan->'events') as e(seq bigint, id text, type text, body text);
    update threads set version = (p_plan->'version'->>'to')::bigint
      where id = p_thread and version = (p_plan->'version'->>'from')::bigint;
    if not found then
      raise exception 'thread % moved past version % during append', p_thread, v_version;
    end if;
  end if;
  -- A column the plan sets that this function does not know would be dropped silently: refuse.
  if v_session <> 'null'::jsonb and exists (select 1 from jsonb_object_keys(v_session) k
      where k not in ('status', 'pending_json', 'usage_json', 'title', 'metadata_json', 'budget_json',
        'archived_at', 'updated_at')) then
    raise exception 'awaken_input_append_v1: unknown session column in %', v_session;
  end if;
  if v_update <> 'null'::jsonb and exists (select 1 from jsonb_object_keys(v_update->'set') k
      where k not in ('state', 'owner', 'epoch', 'lease_expires_at', 'available_at', 'crash_count',
        'updated_at', 'trace_context')) then
    raise exception 'awaken_input_append_v1: unknown run column in %', v_update->'set';
  end if;

  if v_session <> 'null'::jsonb then
    update sessions set
        status = case when v_session ? 'status' then v_session->>'status' else status end,
        pending_json = case when v_session ? 'pending_json' then v_session->>'pending_json' else pending_json end,
        usage_json = case when v_session ? 'usage_json' then v_session->>'usage_json' else usage_json end,
        title = case when v_session ? 'title' then v_session->>'title' else title end,
        metadata_json = case when v_session ? 'metadata_json' then v_session->>'metadata_json' else metadata_json end,
        budget_json = case when v_session ? 'budget_json' then v_session->>'budget_json' else budget_json end,
        archived_at = case when v_session ? 'archived_at' then (v_session->>'archived_at')::bigint else archived_at end,
        updated_at = case when v_session ? 'updated_at' then (v_session->>'updated_at')::bigint else updated_at end
      where id = p_session;
  end if;
  if jsonb_array_length(p_plan->'run_inserts') > 0 then
    -- Columns named: one a later migration adds keeps its default.
    insert into runs (id, session_id, thread_id, state, owner, epoch, lease_expires_at, available_at,
        crash_count, created_at, updated_at, trace_context)
      select r.id, r.session_id, r.thread_id, r.state, r.owner, r.epoch, r.lease_expires_at,
          r.available_at, r.crash_count, r.created_at, r.updated_at, r.trace_context
        from jsonb_populate_recordset(null::runs, p_plan->'run_inserts') as r;
  end if;
  if v_update <> 'null'::jsonb then
    v_set := v_update->'set';
    update runs set
        state = case when v_set ? 'state' then v_set->>'state' else state end,
        owner = case when v_set ? 'owner' then v_set->>'owner' else owner end,
        epoch = case when v_set ? 'epoch' then (v_set->>'epoch')::bigint else epoch end,
        lease_expires_at = case when v_set ? 'lease_expires_at' then (v_set->>'lease_expires_at')::bigint else lease_expires_at end,
        available_at = case when v_set ? 'available_at' then (v_set->>'available_at')::bigint else available_at end,
        crash_count = case when v_set ? 'crash_count' then (v_set->>'crash_count')::bigint else crash_count end,
        updated_at = case when v_set ? 'updated_at' then (v_set->>'updated_at')::bigint else updated_at end,
        trace_context = case when v_set ? 'trace_context' then v_set->>'trace_context' else trace_context end
      where id = v_update->>'id'
        and (not coalesce((v_update->>'only_if_crashed')::boolean, false) or crash_count <> 0)
        and (v_update->'if_epoch' is null or v_update->'if_epoch' = 'null'::jsonb
          or epoch = (v_update->>'if_epoch')::bigint);
  end if;
  if v_receipt <> 'null'::jsonb then
    insert into send_receipts (session_id, request_hash, response_json, created_at, body_hash)
      values (p_session, v_receipt->>'request_hash', v_receipt->>'response_json',
        (v_receipt->>'created_at')::bigint, v_receipt->>'body_hash')
      on conflict (session_id) do update set request_hash = excluded.request_hash,
        response_json = excluded.response_json, created_at = excluded.created_at,
        body_hash = excluded.body_hash;
  end if;
  if p_channel is not null then
    perform pg_notify(p_channel, n.payload)
      from jsonb_array_elements_text(p_plan->'notify') as n(payload);
  end if;
  return 'appended';
end
$fn$`;

export const inputAppendFunction: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await CREATE_FUNCTION.execute(db);
  },
};
