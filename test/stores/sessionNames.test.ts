import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../../src/kernel/ids.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  ManualClock,
  type OpenedStores,
  STORE_BACKENDS,
  type StoreBackend,
  seedQueuedRun,
  seedSession,
} from "../support/storeFixtures.js";

// The session name store on every backend: reservations, bindings, takeovers, workspace isolation,
// and names going with the session (or default environment) they name.

let opened: OpenedStores | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function open(backend: StoreBackend) {
  const clock = new ManualClock();
  opened = await STORE_BACKENDS[backend](clock);
  return { clock, stores: opened.stores, names: opened.stores.sessionNames };
}

const WS = "wrkspc_test";

describe.each(BACKEND_NAMES)("session names on %s", (backend) => {
  const unavailable = backendUnavailable(backend);

  it.skipIf(unavailable)("reserves once, binds for the holder only, and reads what it stored", async () => {
    const { names, clock } = await open(backend);
    const now = clock.now();
    expect(await names.get(WS, "session", "chat-1")).toBeNull();
    expect(await names.reserve(WS, "session", "chat-1", "t1", now, now - 1000)).toBe(true);
    expect(await names.reserve(WS, "session", "chat-1", "t2", now, now - 1000)).toBe(false);
    expect(await names.get(WS, "session", "chat-1")).toEqual({
      state: "reserved",
      token: "t1",
      reservedAt: now,
    });
    expect(await names.bind(WS, "session", "chat-1", "t2", "sesn_b", now)).toBe(false);
    expect(await names.bind(WS, "session", "chat-1", "t1", "sesn_a", now)).toBe(true);
    expect(await names.get(WS, "session", "chat-1")).toEqual({ state: "bound", targetId: "sesn_a" });
    // A bound name is never reserved again, however old, nor bound anew.
    expect(await names.reserve(WS, "session", "chat-1", "t3", now + 1e9, now + 1e9)).toBe(false);
    expect(await names.bind(WS, "session", "chat-1", "t1", "sesn_c", now)).toBe(false);
    expect(await names.get(WS, "session", "chat-1")).toEqual({ state: "bound", targetId: "sesn_a" });
  });

  it.skipIf(unavailable)("takes over a stale reservation, and a binding to a target found gone", async () => {
    const { names, clock } = await open(backend);
    const t0 = clock.now();
    expect(await names.reserve(WS, "session", "n", "old", t0, t0 - 1)).toBe(true);
    // Not stale yet: the reservation was made at t0, not before it.
    expect(await names.reserve(WS, "session", "n", "new", t0 + 5, t0)).toBe(false);
    expect(await names.reserve(WS, "session", "n", "new", t0 + 5, t0 + 1)).toBe(true);
    // The dead creator's late bind fails; the taker's succeeds.
    expect(await names.bind(WS, "session", "n", "old", "sesn_old", t0 + 6)).toBe(false);
    expect(await names.bind(WS, "session", "n", "new", "sesn_new", t0 + 6)).toBe(true);
    expect(await names.reserve(WS, "session", "n", "r", t0 + 7, t0, "sesn_other")).toBe(false);
    expect(await names.reserve(WS, "session", "n", "r", t0 + 7, t0, "sesn_new")).toBe(true);
    expect(await names.get(WS, "session", "n")).toEqual({
      state: "reserved",
      token: "r",
      reservedAt: t0 + 7,
    });
  });

  it.skipIf(unavailable)(
    "release drops only the holder's reservation; bind without a row inserts",
    async () => {
      const { names, clock } = await open(backend);
      const now = clock.now();
      await names.reserve(WS, "session", "n", "t1", now, 0);
      await names.release(WS, "session", "n", "t2");
      expect(await names.get(WS, "session", "n")).not.toBeNull();
      await names.release(WS, "session", "n", "t1");
      expect(await names.get(WS, "session", "n")).toBeNull();
      expect(await names.bind(WS, "session", "n", "t9", "sesn_x", now)).toBe(true);
      await names.release(WS, "session", "n", "t9"); // a binding is never released
      expect(await names.get(WS, "session", "n")).toEqual({ state: "bound", targetId: "sesn_x" });
    },
  );

  it.skipIf(unavailable)("keeps workspaces and key spaces apart", async () => {
    const { names, clock } = await open(backend);
    const now = clock.now();
    expect(await names.bind(WS, "session", "default", "t", "sesn_a", now)).toBe(true);
    expect(await names.bind("wrkspc_other", "session", "default", "t", "sesn_b", now)).toBe(true);
    expect(await names.bind(WS, "default_environment", "default", "t", "env_a", now)).toBe(true);
    expect(await names.get(WS, "session", "default")).toEqual({ state: "bound", targetId: "sesn_a" });
    expect(await names.get("wrkspc_other", "session", "default")).toEqual({
      state: "bound",
      targetId: "sesn_b",
    });
    expect(await names.get(WS, "default_environment", "default")).toEqual({
      state: "bound",
      targetId: "env_a",
    });
    // Names compare exactly: no case folding, no trimming.
    expect(await names.get(WS, "session", "Default")).toBeNull();
    expect(await names.get(WS, "session", "default ")).toBeNull();
  });

  it.skipIf(unavailable)("deleting a session removes its names, and only its names", async () => {
    const { stores, clock } = await open(backend);
    const { session } = await seedQueuedRun(stores, clock);
    const now = clock.now();
    await stores.sessionNames.bind(WS, "session", "mine", "t", session.id, now);
    await stores.sessionNames.bind(WS, "session", "also-mine", "t", session.id, now);
    await stores.sessionNames.bind(WS, "session", "other", "t", "sesn_other", now);
    await stores.ledger.deleteSession(
      session.id,
      { id: newId("sevt", now), type: "session.deleted", body: {} },
      now,
    );
    expect(await stores.sessionNames.get(WS, "session", "mine")).toBeNull();
    expect(await stores.sessionNames.get(WS, "session", "also-mine")).toBeNull();
    expect(await stores.sessionNames.get(WS, "session", "other")).toEqual({
      state: "bound",
      targetId: "sesn_other",
    });
  });

  it.skipIf(unavailable)(
    "names a session's bound names, and lists only sessions bound under a prefix, compared exactly",
    async () => {
      const { stores, clock } = await open(backend);
      const [mine, near, unnamed] = [
        await seedSession(stores, clock),
        await seedSession(stores, clock),
        await seedSession(stores, clock),
      ];
      const now = clock.now();
      await stores.sessionNames.bind(WS, "session", "user-42/chat-1", "t", mine!.id, now);
      await stores.sessionNames.bind(WS, "session", "user-420/chat", "t", near!.id, now);
      await stores.sessionNames.bind(WS, "session", "USER-42/chat-2", "t", near!.id, now);
      // A key of another space never counts as a session's name.
      await stores.sessionNames.bind(WS, "a2a_message", "user-42/key", "t", unnamed!.id, now);
      expect(await stores.sessionNames.namesOf(WS, "session", mine!.id)).toEqual(["user-42/chat-1"]);
      expect(await stores.sessionNames.namesOf(WS, "session", unnamed!.id)).toEqual([]);
      expect(await stores.sessionNames.namesOf("wrkspc_other", "session", mine!.id)).toEqual([]);
      const listed = async (namePrefix: string) =>
        (
          await stores.sessions.list(WS, {
            limit: 10,
            cursor: null,
            order: "asc",
            includeArchived: true,
            namePrefix,
          })
        ).data.map((s) => s.id);
      expect(await listed("user-42/")).toEqual([mine!.id]);
      expect(await listed("user-42")).toEqual([mine!.id, near!.id]);
      // No case folding, no wildcards.
      expect(await listed("user-4_/")).toEqual([]);
      expect(await listed("user-4%")).toEqual([]);
      expect(await listed("USER-42/")).toEqual([near!.id]);
      expect(await listed("user-42/chat-1-and-more")).toEqual([]);
    },
  );

  it.skipIf(unavailable)("deleting an environment removes its default-environment binding", async () => {
    const { stores, clock } = await open(backend);
    const { session } = await seedQueuedRun(stores, clock);
    const envId = session.environmentId;
    await stores.sessionNames.bind(WS, "default_environment", "default", "t", envId, clock.now());
    expect(await stores.environments.delete(WS, envId, testAudit("environment", WS))).toBe(true);
    expect(await stores.sessionNames.get(WS, "default_environment", "default")).toBeNull();
  });
});

describe.skipIf(postgresUnavailable())("session names on PostgreSQL: concurrent first uses", () => {
  it("of the many replicas reserving one name at once, exactly one holds it", async () => {
    const pg = await openTestPostgres();
    try {
      const clock = new ManualClock();
      const replicas = await Promise.all([pg.openReplica(), pg.openReplica(), pg.openReplica()]);
      const stores = [pg.handle, ...replicas].map((h) => postgresCoordinatorStores(h, clock).sessionNames);
      const now = clock.now();
      for (let round = 0; round < 5; round++) {
        const name = `race-${round}`;
        const won = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            stores[i % stores.length]!.reserve(WS, "session", name, `t${i}`, now, now - 1000),
          ),
        );
        expect(won.filter(Boolean)).toHaveLength(1);
        const winner = `t${won.indexOf(true)}`;
        const bound = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            stores[i % stores.length]!.bind(WS, "session", name, `t${i}`, `sesn_${i}`, now),
          ),
        );
        expect(bound.filter(Boolean)).toHaveLength(1);
        expect(await stores[0]!.get(WS, "session", name)).toEqual({
          state: "bound",
          targetId: `sesn_${winner.slice(1)}`,
        });
      }
    } finally {
      await pg.dispose();
    }
  });
});
