import { afterEach, describe, expect, it } from "vitest";
import {
  factPosition,
  firstPosition,
  type PushOutboxStore,
  type PushSubscription,
} from "../../src/coordinator/pushOutbox.js";
import { SqlPushOutboxStore } from "../../src/stores/sql/sqlPushOutboxStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

// The push outbox on SQLite and PostgreSQL: configs scoped to workspace and task, the cursor's
// compare-and-set with its rows, claims that lease the earliest row of each config to one owner,
// leases that lapse, settlements only by the holder, and (PostgreSQL) replicas claiming at once.

type Opened = { stores: PushOutboxStore[]; close(): Promise<void> };
const BACKENDS: Record<string, () => Promise<Opened>> = {
  SQLite: async () => {
    const handle = await openSqlite(":memory:");
    return { stores: [new SqlPushOutboxStore(handle.db, "sqlite")], close: () => handle.close() };
  },
  PostgreSQL: async () => {
    const pg = await openTestPostgres();
    const replica = await pg.openReplica();
    return {
      stores: [
        new SqlPushOutboxStore(pg.handle.db, "postgres"),
        new SqlPushOutboxStore(replica.db, "postgres"),
      ],
      close: () => pg.dispose(),
    };
  },
};

let opened: Opened | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

const NOW = 1_800_000_000_000;

function subscription(configId: string, overrides: Partial<PushSubscription> = {}): PushSubscription {
  return {
    workspaceId: "wrkspc_a",
    taskId: "sesn_1.sevt_1",
    configId,
    agentId: "agent_1",
    sessionId: "sesn_1",
    threadId: "thrd_1",
    url: "https://hooks.example.com/a",
    token: "secret-token",
    authScheme: "",
    authCredentials: "",
    wireVersion: "1.0",
    cursorSeq: 3,
    finished: false,
    createdAt: NOW,
    ...overrides,
  };
}

const message = (body: string) => ({ body, contentType: "application/a2a+json" });

describe.each(Object.keys(BACKENDS))("push outbox on %s", (backend) => {
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;
  const open = async () => {
    opened = await BACKENDS[backend]!();
    return opened.stores;
  };

  it.skipIf(unavailable)(
    "stores configs per workspace and task; a second set retargets, never resets",
    async () => {
      const [store] = await open();
      await store!.subscribe(subscription("c1"), message("first"), NOW);
      await store!.subscribe(
        subscription("c1", { url: "https://hooks.example.com/b", cursorSeq: 9 }),
        message("again"),
        NOW,
      );
      const stored = await store!.subscription("wrkspc_a", "sesn_1.sevt_1", "c1");
      expect(stored).toMatchObject({
        url: "https://hooks.example.com/b",
        cursorSeq: 3,
        token: "secret-token",
      });
      expect(await store!.subscription("wrkspc_other", "sesn_1.sevt_1", "c1")).toBeNull();
      expect((await store!.subscriptions("wrkspc_a", "sesn_1.sevt_1")).map((s) => s.configId)).toEqual([
        "c1",
      ]);
      // One first row only, going to the current target.
      const claimed = await store!.claim("p1", NOW, 1_000, 10);
      expect(claimed.map((c) => [c.body, c.url, c.position])).toEqual([
        ["first", "https://hooks.example.com/b", firstPosition(3)],
      ]);
    },
  );

  it.skipIf(unavailable)("advances by compare-and-set, with its rows, and stops when finished", async () => {
    const [store] = await open();
    const s = subscription("c1");
    await store!.subscribe(s, null, NOW);
    expect(await store!.advance(s, 5, false, [{ ...message("w"), position: factPosition(4, 0) }], NOW)).toBe(
      true,
    );
    // A second process deriving from the same cursor loses: no duplicate rows.
    expect(await store!.advance(s, 5, false, [{ ...message("w"), position: factPosition(4, 0) }], NOW)).toBe(
      false,
    );
    const moved = (await store!.subscription("wrkspc_a", s.taskId, "c1"))!;
    expect(moved.cursorSeq).toBe(5);
    expect(
      await store!.advance(moved, 7, true, [{ ...message("c"), position: factPosition(7, 0) }], NOW),
    ).toBe(true);
    expect(await store!.following(10, null)).toEqual([]);
    const claimed = await store!.claim("p1", NOW, 1_000, 10);
    expect(claimed.map((c) => c.body)).toEqual(["w"]);
  });

  it.skipIf(unavailable)(
    "tells when the next row falls due: a retry's time or a lease's end, for each config's first row",
    async () => {
      const [store] = await open();
      expect(await store!.nextDueAt()).toBeNull();
      const s = subscription("c1");
      await store!.subscribe(s, message("r0"), NOW);
      await store!.advance(s, 5, false, [{ ...message("r1"), position: factPosition(4, 0) }], NOW);
      expect(await store!.nextDueAt()).toBe(NOW);
      // Leased: due again when the lease ends; the row behind it is not due before it.
      const [r0] = await store!.claim("p1", NOW, 1_000, 10);
      expect(await store!.nextDueAt()).toBe(NOW + 1_000);
      await store!.settle(r0!, "p1", { kind: "retry", at: NOW + 5_000, error: "HTTP 503" }, NOW + 10);
      expect(await store!.nextDueAt()).toBe(NOW + 5_000);
      // Another config's row due sooner comes first.
      await store!.subscribe(subscription("c2"), message("other"), NOW + 20);
      expect(await store!.nextDueAt()).toBe(NOW + 20);
      const [other] = await store!.claim("p1", NOW + 20, 1_000, 10);
      await store!.settle(other!, "p1", { kind: "delivered" }, NOW + 30);
      const [again] = await store!.claim("p1", NOW + 5_000, 1_000, 10);
      await store!.settle(again!, "p1", { kind: "delivered" }, NOW + 5_010);
      // r1 is now its config's first undelivered row, due since it was written.
      expect(await store!.nextDueAt()).toBe(NOW);
      const [r1] = await store!.claim("p1", NOW + 5_010, 1_000, 10);
      await store!.settle(r1!, "p1", { kind: "abandoned", error: "out of attempts" }, NOW + 5_020);
      expect(await store!.nextDueAt()).toBeNull();
    },
  );

  it.skipIf(unavailable)(
    "delivers a config's rows in order, leases them, and lets a lapsed lease be reclaimed",
    async () => {
      const [store] = await open();
      const s = subscription("c1");
      await store!.subscribe(s, message("r0"), NOW);
      await store!.advance(
        s,
        5,
        false,
        [
          { ...message("r1"), position: factPosition(4, 0) },
          { ...message("r2"), position: factPosition(5, 0) },
        ],
        NOW,
      );
      const first = await store!.claim("p1", NOW, 1_000, 10);
      expect(first.map((c) => [c.body, c.attempts])).toEqual([["r0", 1]]);
      // Leased: nobody else gets it, nor the rows behind it.
      expect(await store!.claim("p2", NOW + 10, 1_000, 10)).toEqual([]);
      // A retry settles the lease; the row is due again at its time, the next one still waits.
      expect(await store!.settle(first[0]!, "p2", { kind: "delivered" }, NOW)).toBe(false);
      expect(
        await store!.settle(first[0]!, "p1", { kind: "retry", at: NOW + 500, error: "HTTP 503" }, NOW),
      ).toBe(true);
      expect(await store!.claim("p2", NOW + 100, 1_000, 10)).toEqual([]);
      // The holder dies mid-attempt: after its lease lapses, another owner takes the row over.
      const again = await store!.claim("p2", NOW + 500, 1_000, 10);
      expect(again.map((c) => [c.body, c.attempts])).toEqual([["r0", 2]]);
      const taken = await store!.claim("p3", NOW + 1_600, 1_000, 10);
      expect(taken.map((c) => [c.body, c.attempts])).toEqual([["r0", 3]]);
      expect(await store!.settle(again[0]!, "p2", { kind: "delivered" }, NOW + 1_600)).toBe(false);
      expect(await store!.settle(taken[0]!, "p3", { kind: "delivered" }, NOW + 1_700)).toBe(true);
      const next = await store!.claim("p3", NOW + 1_700, 1_000, 10);
      expect(next.map((c) => c.body)).toEqual(["r1"]);
      // Abandoned rows let the next one go.
      await store!.settle(next[0]!, "p3", { kind: "abandoned", error: "out of attempts" }, NOW + 1_800);
      expect((await store!.claim("p3", NOW + 1_800, 1_000, 10)).map((c) => c.body)).toEqual(["r2"]);
    },
  );

  it.skipIf(unavailable)("pages through the configs still following, oldest first", async () => {
    const [store] = await open();
    for (const [id, at] of [
      ["c", 2],
      ["a", 1],
      ["b", 2],
      ["d", 3],
    ] as const) {
      await store!.subscribe(subscription(id, { createdAt: NOW + at }), null, NOW);
    }
    await store!.subscribe(subscription("done", { createdAt: NOW, finished: true }), null, NOW);
    const first = await store!.following(2, null);
    expect(first.map((s) => s.configId)).toEqual(["a", "b"]);
    const second = await store!.following(2, first.at(-1)!);
    expect(second.map((s) => s.configId)).toEqual(["c", "d"]);
    expect(await store!.following(2, second.at(-1)!)).toEqual([]);
  });

  it.skipIf(unavailable)("unsubscribing drops the config and its undelivered rows", async () => {
    const [store] = await open();
    await store!.subscribe(subscription("c1"), message("r0"), NOW);
    await store!.subscribe(subscription("c2"), message("other"), NOW);
    expect(await store!.unsubscribe("wrkspc_a", "sesn_1.sevt_1", "c1")).toBe(true);
    expect(await store!.unsubscribe("wrkspc_a", "sesn_1.sevt_1", "c1")).toBe(false);
    expect((await store!.claim("p1", NOW, 1_000, 10)).map((c) => c.body)).toEqual(["other"]);
  });

  it.skipIf(unavailable)(
    "concurrent claimers (replicas on PostgreSQL) never lease one row twice",
    async () => {
      const stores = await open();
      for (let i = 0; i < 20; i++) await stores[0]!.subscribe(subscription(`c${i}`), message(`r${i}`), NOW);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => stores[i % stores.length]!.claim(`p${i}`, NOW, 5_000, 4)),
      );
      const bodies = claims.flat().map((c) => c.body);
      expect(new Set(bodies).size).toBe(bodies.length);
      expect(bodies.length).toBe(20);
    },
  );
});
