import { afterEach, describe, expect, it } from "vitest";
import type { SessionReach } from "../../src/coordinator/sessionChangeFeed.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlWorkspaceThreads } from "../../src/stores/sql/sqlWorkspaceThreads.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres } from "../support/postgresFixtures.js";

// Which committed threads a hint stream's reach covers, on SQLite and PostgreSQL: the workspace's
// sessions (deleted ones too: their deletion is news), narrowed to agents, to one session or to the
// sessions bound to a client name under a prefix.
// PostgreSQL needs AWAKEN_TEST_DATABASE_URL: without it these fail, they never skip.

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

async function session(
  db: Db,
  id: string,
  workspaceId: string,
  agentId: string,
  deletedAt: number | null = null,
) {
  await db
    .insertInto("sessions")
    .values({
      id,
      workspace_id: workspaceId,
      agent_id: agentId,
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

async function thread(db: Db, sessionId: string) {
  await db
    .insertInto("threads")
    .values({ id: `thr_${sessionId}`, session_id: sessionId, created_at: NOW })
    .execute();
}

describe.each(Object.keys(BACKENDS))("the threads a hint stream's reach covers, on %s", (backend) => {
  it("the workspace's threads only, narrowed by agents and by session", async () => {
    opened = await BACKENDS[backend]!();
    const { db } = opened;
    await session(db, "s1", "wrkspc_a", "agent_1");
    await session(db, "s2", "wrkspc_a", "agent_2");
    await session(db, "s3", "wrkspc_a", "agent_1", NOW - 1);
    await session(db, "s4", "wrkspc_b", "agent_1");
    for (const id of ["s1", "s2", "s3", "s4"]) await thread(db, id);
    const threads = new SqlWorkspaceThreads(db);
    const all = ["thr_s1", "thr_s2", "thr_s3", "thr_s4", "thr_unknown"];
    const reach = (r: Partial<SessionReach>): SessionReach => ({
      workspaceId: "wrkspc_a",
      agentIds: null,
      sessionId: null,
      ...r,
    });
    const of = async (r: Partial<SessionReach>) => [...(await threads.threadsOf(reach(r), all))].sort();
    expect(await of({})).toStrictEqual(["thr_s1", "thr_s2", "thr_s3"]);
    expect(await of({ workspaceId: "wrkspc_b" })).toStrictEqual(["thr_s4"]);
    expect(await of({ agentIds: ["agent_2"] })).toStrictEqual(["thr_s2"]);
    expect(await of({ agentIds: [] })).toStrictEqual([]);
    expect(await of({ sessionId: "s1" })).toStrictEqual(["thr_s1"]);
    expect(await of({ sessionId: "s4" })).toStrictEqual([]);
    expect(await of({ agentIds: ["agent_2"], sessionId: "s1" })).toStrictEqual([]);
    expect([...(await threads.threadsOf(reach({}), []))]).toStrictEqual([]);
  });

  it("narrowed to a name prefix: sessions bound to a client name under it, in the workspace", async () => {
    opened = await BACKENDS[backend]!();
    const { db } = opened;
    for (const [id, workspaceId] of [
      ["s1", "wrkspc_a"],
      ["s2", "wrkspc_a"],
      ["s3", "wrkspc_a"],
      ["s4", "wrkspc_b"],
    ] as const) {
      await session(db, id, workspaceId, "agent_1");
      await thread(db, id);
    }
    const bind = (workspaceId: string, space: string, name: string, targetId: string) =>
      db
        .insertInto("session_names")
        .values({
          workspace_id: workspaceId,
          space,
          name,
          target_id: targetId,
          reservation: null,
          reserved_at: null,
          created_at: NOW,
        })
        .execute();
    await bind("wrkspc_a", "session", "user-42/chat", "s1");
    await bind("wrkspc_a", "session", "user-7/chat", "s2");
    await bind("wrkspc_a", "a2a_message", "user-42/key", "s3");
    await bind("wrkspc_b", "session", "user-42/chat", "s4");
    const threads = new SqlWorkspaceThreads(db);
    const all = ["thr_s1", "thr_s2", "thr_s3", "thr_s4"];
    const of = async (namePrefix: string, agentIds: string[] | null = null) =>
      [
        ...(await threads.threadsOf({ workspaceId: "wrkspc_a", agentIds, sessionId: null, namePrefix }, all)),
      ].sort();
    expect(await of("user-42/")).toStrictEqual(["thr_s1"]);
    expect(await of("user-")).toStrictEqual(["thr_s1", "thr_s2"]);
    expect(await of("user-4_/")).toStrictEqual([]);
    expect(await of("user-42/", ["agent_2"])).toStrictEqual([]);
  });
});
