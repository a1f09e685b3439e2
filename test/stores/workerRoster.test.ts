import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlWorkerRoster } from "../../src/stores/sql/sqlWorkerRoster.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres } from "../support/postgresFixtures.js";

// The worker roster's reads on SQLite and PostgreSQL: the claims workers hold on a workspace's runs
// (owner, epoch, lease, lapsed ones too), the self-hosted pollers and the work each holds, and
// nothing of another workspace. PostgreSQL needs AWAKEN_TEST_DATABASE_URL: without it these fail,
// they never skip.

type Opened = { db: Db; close(): Promise<void> };
const BACKENDS: Record<string, () => Promise<Opened>> = {
  SQLite: async () => {
    const handle = await openSqlite(":memory:");
    return { db: handle.db, close: () => handle.close() };
  },
  PostgreSQL: async () => {
    const pg = await openTestPostgres();
    return { db: pg.handle.db, close: () => pg.dispose() };
  },
};

let opened: Opened | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

const NOW = 1_800_000_000_000;
const A = "wrkspc_a";
const B = "wrkspc_b";

async function session(db: Db, id: string, workspaceId: string, deletedAt: number | null = null) {
  await db
    .insertInto("sessions")
    .values({
      id,
      workspace_id: workspaceId,
      agent_id: "agent_1",
      agent_version: 1,
      agent_snapshot_json: "{}",
      environment_id: `env_${workspaceId}`,
      environment_revision: 1,
      thread_id: `thr_${id}`,
      title: null,
      metadata_json: "{}",
      status: "running",
      pending_json: "[]",
      usage_json: "{}",
      resources_json: "[]",
      vault_ids_json: "[]",
      credential_pins_json: "[]",
      budget_json: null,
      created_at: NOW - 60_000,
      updated_at: NOW - 60_000,
      archived_at: null,
      deleted_at: deletedAt,
    })
    .execute();
}

async function run(
  db: Db,
  id: string,
  sessionId: string,
  claim: { state?: string; owner: string | null; epoch: number; lease: number | null; renewedAt: number },
) {
  await db
    .insertInto("runs")
    .values({
      id,
      session_id: sessionId,
      thread_id: `thr_${sessionId}`,
      state: claim.state ?? "claimed",
      owner: claim.owner,
      epoch: claim.epoch,
      lease_expires_at: claim.lease,
      available_at: NOW - 60_000,
      crash_count: 0,
      created_at: NOW - 60_000,
      updated_at: claim.renewedAt,
    })
    .execute();
}

async function environment(db: Db, id: string, workspaceId: string) {
  await db
    .insertInto("environments")
    .values({
      id,
      workspace_id: workspaceId,
      name: id,
      description: null,
      scope: null,
      metadata_json: "{}",
      config_type: "self_hosted",
      latest_revision: 1,
      created_at: NOW - 60_000,
      updated_at: NOW - 60_000,
      archived_at: null,
    })
    .execute();
}

async function work(
  db: Db,
  id: string,
  item: {
    workspaceId: string;
    environmentId: string;
    sessionId: string;
    state: string;
    owner: string | null;
  },
) {
  await db
    .insertInto("work_items")
    .values({
      id,
      workspace_id: item.workspaceId,
      environment_id: item.environmentId,
      session_id: item.sessionId,
      state: item.state,
      metadata_json: "{}",
      owner: item.owner,
      epoch: 3,
      polled_at: NOW - 5_000,
      acknowledged_at: null,
      started_at: null,
      last_heartbeat_at: null,
      lease_expires_at: item.owner ? NOW + 30_000 : null,
      ttl_seconds: 300,
      stop_requested_at: null,
      stopped_at: item.state === "stopped" ? NOW - 1_000 : null,
      created_at: NOW - 10_000,
      updated_at: NOW - 5_000,
    })
    .execute();
}

describe.each(Object.keys(BACKENDS))("the worker roster's reads on %s", (backend) => {
  const open = async () => {
    opened = await BACKENDS[backend]!();
    return { db: opened.db, roster: new SqlWorkerRoster(opened.db) };
  };

  it("lists the runs held by a claim with owner, epoch and lease as numbers, lapsed leases included, latest renewal first", async () => {
    const { db, roster } = await open();
    await session(db, "sesn_1", A);
    await session(db, "sesn_2", A);
    await session(db, "sesn_3", A);
    await run(db, "run_live", "sesn_1", {
      owner: "local.w1.inc1/0",
      epoch: 7,
      lease: NOW + 30_000,
      renewedAt: NOW - 1_000,
    });
    // Past 2^31: a PostgreSQL bigint must still come back as the number it is.
    await run(db, "run_lapsed", "sesn_2", {
      owner: "remote.w2.inc9/3",
      epoch: 3_000_000_000,
      lease: NOW - 5_000,
      renewedAt: NOW - 40_000,
    });
    await run(db, "run_queued", "sesn_3", {
      state: "queued",
      owner: null,
      epoch: 2,
      lease: null,
      renewedAt: NOW,
    });
    await run(db, "run_done", "sesn_3", {
      state: "completed",
      owner: null,
      epoch: 4,
      lease: null,
      renewedAt: NOW,
    });

    expect(await roster.heldClaims(A, 10)).toStrictEqual([
      {
        runId: "run_live",
        sessionId: "sesn_1",
        owner: "local.w1.inc1/0",
        epoch: 7,
        leaseExpiresAt: NOW + 30_000,
        renewedAt: NOW - 1_000,
      },
      {
        runId: "run_lapsed",
        sessionId: "sesn_2",
        owner: "remote.w2.inc9/3",
        epoch: 3_000_000_000,
        leaseExpiresAt: NOW - 5_000,
        renewedAt: NOW - 40_000,
      },
    ]);
    expect((await roster.heldClaims(A, 1)).map((c) => c.runId)).toStrictEqual(["run_live"]);
  });

  it("reads only the caller's workspace's runs, and none of a deleted session", async () => {
    const { db, roster } = await open();
    await session(db, "sesn_a", A);
    await session(db, "sesn_b", B);
    await session(db, "sesn_gone", A, NOW - 1);
    const claim = { owner: "local.w1.inc1/0", epoch: 1, lease: NOW + 30_000, renewedAt: NOW };
    await run(db, "run_a", "sesn_a", claim);
    await run(db, "run_b", "sesn_b", claim);
    await run(db, "run_gone", "sesn_gone", claim);

    expect((await roster.heldClaims(A, 10)).map((c) => c.runId)).toStrictEqual(["run_a"]);
    expect((await roster.heldClaims(B, 10)).map((c) => c.runId)).toStrictEqual(["run_b"]);
    expect(await roster.heldClaims("wrkspc_none", 10)).toStrictEqual([]);
  });

  it("lists the workspace's self-hosted pollers, latest poll first, each with the work it still holds", async () => {
    const { db, roster } = await open();
    await environment(db, "env_a", A);
    await environment(db, "env_b", B);
    for (const id of ["s1", "s2", "s3", "s4", "s5"]) await session(db, id, A);
    await session(db, "s_b", B);
    await db
      .insertInto("work_pollers")
      .values([
        { environment_id: "env_a", worker_id: "host-1", last_polled_at: NOW - 2_000 },
        { environment_id: "env_a", worker_id: "host-2", last_polled_at: NOW - 120_000 },
        { environment_id: "env_b", worker_id: "host-1", last_polled_at: NOW - 1_000 },
      ])
      .execute();
    await work(db, "work_1", {
      workspaceId: A,
      environmentId: "env_a",
      sessionId: "s1",
      state: "active",
      owner: "host-1",
    });
    await work(db, "work_2", {
      workspaceId: A,
      environmentId: "env_a",
      sessionId: "s2",
      state: "starting",
      owner: "host-1",
    });
    await work(db, "work_3", {
      workspaceId: A,
      environmentId: "env_a",
      sessionId: "s3",
      state: "stopped",
      owner: "host-1",
    });
    await work(db, "work_4", {
      workspaceId: A,
      environmentId: "env_a",
      sessionId: "s4",
      state: "queued",
      owner: null,
    });
    await work(db, "work_5", {
      workspaceId: A,
      environmentId: "env_a",
      sessionId: "s5",
      state: "stopping",
      owner: "host-2",
    });
    // Another workspace's poller with the same worker id holds its own work, never shown to A.
    await work(db, "work_b", {
      workspaceId: B,
      environmentId: "env_b",
      sessionId: "s_b",
      state: "active",
      owner: "host-1",
    });

    const held = (workId: string, sessionId: string, state: string) => ({
      workId,
      sessionId,
      state,
      leaseExpiresAt: NOW + 30_000,
    });
    expect(await roster.pollers(A, 10)).toStrictEqual([
      {
        environmentId: "env_a",
        workerId: "host-1",
        lastPolledAt: NOW - 2_000,
        work: [held("work_1", "s1", "active"), held("work_2", "s2", "starting")],
      },
      {
        environmentId: "env_a",
        workerId: "host-2",
        lastPolledAt: NOW - 120_000,
        work: [held("work_5", "s5", "stopping")],
      },
    ]);
    expect(await roster.pollers(B, 10)).toStrictEqual([
      {
        environmentId: "env_b",
        workerId: "host-1",
        lastPolledAt: NOW - 1_000,
        work: [held("work_b", "s_b", "active")],
      },
    ]);
    expect((await roster.pollers(A, 1)).map((p) => p.workerId)).toStrictEqual(["host-1"]);
    expect(await roster.pollers("wrkspc_none", 10)).toStrictEqual([]);
  });
});
