/**
 * The memory store port's conformance suite, on a SQLite file and on PostgreSQL: a run's write-back
 * happens only under its live claim (stale epoch, lapsed lease, another session's or workspace's
 * claim: refused, nothing written), each change under its own content precondition (a failed one
 * is a conflict, the others still apply, nothing is overwritten), attributed to the session.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Activation, CoordinatorStores } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import type { MemoryStore, MemoryStoreRecord, MemoryWriteLimits } from "../../src/resources/memory/ports.js";
import { type ResourceClaim, ResourceClaimLostError } from "../../src/resources/ports.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { contentSha256 } from "../../src/stores/sql/memoryRows.js";
import { SqlMemoryStore } from "../../src/stores/sql/sqlMemoryStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import { ManualClock, seedQueuedRun } from "../support/storeFixtures.js";

const LEASE_MS = 10_000;
const LIMITS: MemoryWriteLimits = { maxContentBytes: 1024, maxMemoriesPerStore: 50 };
const WORKSPACE = "wrkspc_test";

interface Backend {
  coordinator: CoordinatorStores;
  memory: MemoryStore;
  close(): Promise<void>;
}

const BACKENDS = {
  "SQLite file": async (clock: ManualClock): Promise<Backend> => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-memory-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    return {
      coordinator: sqliteCoordinatorStores(handle, clock),
      memory: new SqlMemoryStore(handle.db, "sqlite"),
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async (clock: ManualClock): Promise<Backend> => {
    const pg = await openTestPostgres();
    return {
      coordinator: postgresCoordinatorStores(pg.handle, clock),
      memory: new SqlMemoryStore(pg.handle.db, "postgres"),
      close: () => pg.dispose(),
    };
  },
} as const;

const claimOf = (a: Activation): ResourceClaim => ({
  workspaceId: a.workspaceId,
  sessionId: a.sessionId,
  runId: a.runId,
  owner: a.owner,
  epoch: a.epoch,
});

describe.each(Object.keys(BACKENDS) as Array<keyof typeof BACKENDS>)(
  "memory write-back under a claim: %s",
  (name) => {
    let backend: Backend | undefined;
    let clock: ManualClock;
    let store: MemoryStoreRecord;

    beforeEach(async (ctx) => {
      const reason = name === "PostgreSQL" ? postgresUnavailable() : null;
      if (reason) ctx.skip(reason);
      clock = new ManualClock();
      backend = await BACKENDS[name](clock);
      const now = clock.now();
      store = {
        id: newId("memstore", now),
        workspaceId: WORKSPACE,
        name: "prefs",
        description: "",
        metadata: {},
        createdAt: now,
        updatedAt: now,
        archivedAt: null,
      };
      await backend.memory.createStore(store);
    });
    afterEach(async () => {
      await backend?.close();
      backend = undefined;
    });

    /** A session with its run claimed by `owner`. */
    async function claimedRun(owner: string): Promise<ResourceClaim> {
      const b = backend!;
      const seeded = await seedQueuedRun(b.coordinator, clock);
      const activation = await b.coordinator.dispatch.claim(owner, LEASE_MS);
      expect(activation?.runId).toBe(seeded.runId);
      return claimOf(activation!);
    }

    async function apiCreate(path: string, content: string) {
      const now = clock.now();
      const result = await backend!.memory.createMemory(
        WORKSPACE,
        store.id,
        { id: newId("mem", now), versionId: newId("memver", now), path, content, author: null },
        LIMITS,
        now,
      );
      if (!result.ok) throw new Error(`seeding ${path}: ${result.refusal.kind}`);
      return result.memory;
    }

    async function versionsOf(): Promise<string[]> {
      const page = await backend!.memory.listVersions(WORKSPACE, store.id, {
        limit: 1000,
        cursor: null,
        memoryId: null,
        operation: null,
        sessionId: null,
        apiKeyId: null,
        serviceAccountId: null,
        createdAtGte: null,
        createdAtLte: null,
      });
      return page!.data.map((v) => `${v.operation} ${v.path}`);
    }

    it("writes creates, updates and deletes as versions attributed to the session, and snapshots them back", async () => {
      const claim = await claimedRun("w1");
      const keep = await apiCreate("/keep.md", "v1");
      const drop = await apiCreate("/drop.md", "bye");
      const snapshot = await backend!.memory.snapshot(WORKSPACE, store.id);
      expect(snapshot?.map((e) => e.path).sort()).toEqual(["drop.md", "keep.md"]);
      expect(snapshot?.find((e) => e.path === "keep.md")?.contentSha256).toBe(contentSha256("v1"));

      const outcomes = await backend!.memory.writeBackUnderClaim(
        claim,
        store.id,
        [
          { kind: "create", path: "notes/new.md", content: "hello" },
          {
            kind: "update",
            memoryId: keep.id,
            path: "keep.md",
            content: "v2",
            expectedContentSha256: contentSha256("v1"),
          },
          { kind: "delete", memoryId: drop.id, path: "drop.md", expectedContentSha256: contentSha256("bye") },
        ],
        LIMITS,
        clock.now(),
      );
      expect(outcomes.map((o) => o.outcome)).toEqual(["written", "written", "deleted"]);
      expect(outcomes[1]).toMatchObject({ memoryId: keep.id, contentSha256: contentSha256("v2") });

      const after = await backend!.memory.snapshot(WORKSPACE, store.id);
      expect(after?.map((e) => [e.path, e.content]).sort()).toEqual([
        ["keep.md", "v2"],
        ["notes/new.md", "hello"],
      ]);
      const page = await backend!.memory.listVersions(WORKSPACE, store.id, {
        limit: 100,
        cursor: null,
        memoryId: null,
        operation: null,
        sessionId: claim.sessionId,
        apiKeyId: null,
        serviceAccountId: null,
        createdAtGte: null,
        createdAtLte: null,
      });
      expect(page?.data).toHaveLength(3);
      for (const v of page!.data) {
        expect(v.createdBy).toEqual({
          type: "session_actor",
          sessionId: claim.sessionId,
          runId: claim.runId,
        });
      }
    });

    it("a failed precondition is a conflict for that change only: the others apply, nothing is overwritten", async () => {
      const claim = await claimedRun("w1");
      const a = await apiCreate("/a.md", "a1");
      await apiCreate("/taken.md", "someone else's");
      const outcomes = await backend!.memory.writeBackUnderClaim(
        claim,
        store.id,
        [
          {
            kind: "update",
            memoryId: a.id,
            path: "a.md",
            content: "mine",
            expectedContentSha256: contentSha256("stale"),
          },
          { kind: "create", path: "taken.md", content: "mine" },
          { kind: "create", path: "taken.md/below.md", content: "mine" },
          { kind: "create", path: "fresh.md", content: "mine" },
          { kind: "create", path: "../escape.md", content: "x" },
          { kind: "create", path: "/absolute.md", content: "x" },
          { kind: "create", path: "big.md", content: "x".repeat(LIMITS.maxContentBytes + 1) },
          { kind: "delete", memoryId: "mem_gone", path: "gone.md", expectedContentSha256: contentSha256("") },
        ],
        LIMITS,
        clock.now(),
      );
      expect(outcomes.map((o) => `${o.path} ${o.outcome}`)).toEqual([
        "a.md conflict",
        "taken.md conflict",
        "taken.md/below.md conflict",
        "fresh.md written",
        "../escape.md refused",
        "/absolute.md refused",
        "big.md refused",
        "gone.md conflict",
      ]);
      const snapshot = await backend!.memory.snapshot(WORKSPACE, store.id);
      expect(snapshot?.map((e) => [e.path, e.content]).sort()).toEqual([
        ["a.md", "a1"],
        ["fresh.md", "mine"],
        ["taken.md", "someone else's"],
      ]);
    });

    it("a concurrent API update between snapshot and write-back makes the run's change a conflict", async () => {
      const claim = await claimedRun("w1");
      const m = await apiCreate("/shared.md", "original");
      const [entry] = (await backend!.memory.snapshot(WORKSPACE, store.id))!;
      const now = clock.now();
      const api = await backend!.memory.updateMemory(
        WORKSPACE,
        store.id,
        m.id,
        {
          versionId: newId("memver", now),
          path: null,
          content: "from the API",
          expectedContentSha256: null,
          author: null,
        },
        now,
      );
      expect(api.ok).toBe(true);
      const [outcome] = await backend!.memory.writeBackUnderClaim(
        claim,
        store.id,
        [
          {
            kind: "update",
            memoryId: m.id,
            path: "shared.md",
            content: "from the run",
            expectedContentSha256: entry!.contentSha256,
          },
        ],
        LIMITS,
        clock.now(),
      );
      expect(outcome).toMatchObject({ outcome: "conflict", reason: expect.stringMatching(/changed since/) });
      expect((await backend!.memory.getMemory(WORKSPACE, store.id, m.id))?.content).toBe("from the API");
    });

    it("concurrent write-backs of the same memory: exactly one wins each round, the others are conflicts", async () => {
      const claims = [
        await claimedRun("w1"),
        await claimedRun("w2"),
        await claimedRun("w3"),
        await claimedRun("w4"),
      ];
      const m = await apiCreate("/race.md", "base");
      let expected = contentSha256("base");
      const rounds = 5;
      for (let round = 0; round < rounds; round++) {
        const results = await Promise.all(
          claims.map((claim, i) =>
            backend!.memory.writeBackUnderClaim(
              claim,
              store.id,
              [
                {
                  kind: "update",
                  memoryId: m.id,
                  path: "race.md",
                  content: `r${round} w${i}`,
                  expectedContentSha256: expected,
                },
              ],
              LIMITS,
              clock.now(),
            ),
          ),
        );
        const winners = results.flatMap(([o], i) => (o?.outcome === "written" ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(results.filter(([o]) => o?.outcome === "conflict")).toHaveLength(claims.length - 1);
        const content = `r${round} w${winners[0]}`;
        expect((await backend!.memory.getMemory(WORKSPACE, store.id, m.id))?.content).toBe(content);
        expected = contentSha256(content);
      }
      expect(await versionsOf()).toHaveLength(rounds + 1);
    });

    it("refuses a claim that is not live, writing nothing: stale epoch, lapsed lease, another session, another workspace", async () => {
      const live = await claimedRun("w1");
      const m = await apiCreate("/fenced.md", "before");
      const change = [
        {
          kind: "update" as const,
          memoryId: m.id,
          path: "fenced.md",
          content: "after",
          expectedContentSha256: contentSha256("before"),
        },
        { kind: "create" as const, path: "new.md", content: "x" },
      ];
      const other = await claimedRun("w9");
      const refusals: ResourceClaim[] = [
        { ...live, epoch: live.epoch + 1 },
        { ...live, owner: "w2" },
        { ...live, sessionId: other.sessionId },
        { ...live, workspaceId: "wrkspc_other" },
        { ...live, runId: "run_unknown" },
      ];
      for (const claim of refusals) {
        await expect(
          backend!.memory.writeBackUnderClaim(claim, store.id, change, LIMITS, clock.now()),
        ).rejects.toBeInstanceOf(ResourceClaimLostError);
      }
      // The lease lapses: refused, although nobody has reclaimed the run yet.
      clock.advance(LEASE_MS + 1);
      await expect(
        backend!.memory.writeBackUnderClaim(live, store.id, change, LIMITS, clock.now()),
      ).rejects.toBeInstanceOf(ResourceClaimLostError);
      // Reclaimed by another worker at a new epoch: the old claim stays refused, the new one writes.
      const reclaimed = claimOf((await backend!.coordinator.dispatch.claim("w3", LEASE_MS))!);
      expect(reclaimed.runId).toBe(live.runId);
      expect(reclaimed.epoch).toBeGreaterThan(live.epoch);
      await expect(
        backend!.memory.writeBackUnderClaim(live, store.id, change, LIMITS, clock.now()),
      ).rejects.toBeInstanceOf(ResourceClaimLostError);
      expect(await versionsOf()).toEqual(["created /fenced.md"]);
      expect((await backend!.memory.getMemory(WORKSPACE, store.id, m.id))?.content).toBe("before");

      const outcomes = await backend!.memory.writeBackUnderClaim(
        reclaimed,
        store.id,
        change,
        LIMITS,
        clock.now(),
      );
      expect(outcomes.map((o) => o.outcome)).toEqual(["written", "written"]);
    });

    it("an archived store, or another workspace's store, is refused change by change", async () => {
      const claim = await claimedRun("w1");
      await backend!.memory.updateStore({ ...store, archivedAt: clock.now() });
      const outcomes = await backend!.memory.writeBackUnderClaim(
        claim,
        store.id,
        [{ kind: "create", path: "x.md", content: "x" }],
        LIMITS,
        clock.now(),
      );
      expect(outcomes).toEqual([
        { path: "x.md", outcome: "refused", reason: expect.stringMatching(/archived/) },
      ]);
      const elsewhere = {
        ...store,
        id: newId("memstore", clock.now()),
        workspaceId: "wrkspc_other",
        archivedAt: null,
      };
      await backend!.memory.createStore(elsewhere);
      const [foreign] = await backend!.memory.writeBackUnderClaim(
        claim,
        elsewhere.id,
        [{ kind: "create", path: "x.md", content: "x" }],
        LIMITS,
        clock.now(),
      );
      expect(foreign).toMatchObject({
        outcome: "refused",
        reason: expect.stringMatching(/no longer exists/),
      });
      expect(await backend!.memory.snapshot("wrkspc_other", elsewhere.id)).toEqual([]);
      expect(await backend!.memory.snapshot(WORKSPACE, elsewhere.id)).toBeNull();
    });
  },
);
