import fc from "fast-check";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { CommitOperation, CommitReceipt } from "../../src/coordinator/commitOperation.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { openTestPostgres, type TestPostgres } from "../support/postgresFixtures.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  ManualClock,
  op,
  type StoreBackend,
  seedQueuedRun,
  sessionWithQueuedRun,
} from "../support/storeFixtures.js";

const LEASE_MS = 1_000;
const WORKERS = ["w1", "w2", "w3"] as const;

type Action =
  | { kind: "claim"; worker: number }
  | { kind: "renew"; worker: number }
  | { kind: "advance"; ms: number }
  | { kind: "commit"; worker: number; facts: number; settle: boolean }
  | { kind: "retryLast"; worker: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant("claim" as const), worker: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant("renew" as const), worker: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 1_500 }) }),
  fc.record({
    kind: fc.constant("commit" as const),
    worker: fc.integer({ min: 0, max: 2 }),
    facts: fc.integer({ min: 0, max: 3 }),
    settle: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("retryLast" as const), worker: fc.integer({ min: 0, max: 2 }) }),
);

/**
 * A fresh store per run. On PostgreSQL a new schema per run (create, migrate, drop: most of the
 * test's time, and more with every migration) is replaced by one schema for the file, emptied
 * before each run: the same empty tables, the same stores, the same server.
 */
let sharedPostgres: TestPostgres | undefined;
afterAll(async () => {
  await sharedPostgres?.dispose();
  sharedPostgres = undefined;
});

async function freshFixture(backend: StoreBackend): ReturnType<typeof sessionWithQueuedRun> {
  if (backend !== "PostgreSQL stores") return sessionWithQueuedRun(backend);
  sharedPostgres ??= await openTestPostgres();
  const { handle } = sharedPostgres;
  await sharedPostgres.empty();
  const clock = new ManualClock();
  const seeded = await seedQueuedRun(postgresCoordinatorStores(handle, clock), clock);
  return { ...seeded, db: handle.db, handle: { close: async () => {} } };
}

describe.each(BACKEND_NAMES)("the commit fence under random interleavings: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  it("never accepts a stale epoch, never puts two facts at one version, never loses an acknowledged commit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 40 }), async (actions) => {
        const fx = await freshFixture(backend);
        try {
          // What each worker believes it holds, and the truth the model tracks.
          const held = new Map<number, { owner: string; epoch: number; leaseUntil: number }>();
          const lastOp = new Map<number, { op: CommitOperation; receipt: CommitReceipt | null }>();
          let highestEpoch = 0;
          let settled = false;
          // Each new operation gets a fresh id; only `retryLast` repeats one.
          let attempts = 0;
          const acknowledged: string[] = [];
          const initialVersion = await fx.stores.history.threadVersion(fx.session.threadId);

          for (const a of actions) {
            const now = fx.clock.now();
            if (a.kind === "advance") {
              fx.clock.advance(a.ms);
            } else if (a.kind === "claim") {
              const activation = await fx.stores.dispatch.claim(`${WORKERS[a.worker]}`, LEASE_MS);
              if (activation) {
                // A claim is only granted when nobody holds a live lease, and always at a new epoch.
                for (const [w, h] of held) {
                  if (w !== a.worker && h.epoch === highestEpoch)
                    expect(h.leaseUntil).toBeLessThanOrEqual(now);
                }
                expect(activation.epoch).toBe(highestEpoch + 1);
                highestEpoch = activation.epoch;
                held.set(a.worker, {
                  owner: activation.owner,
                  epoch: activation.epoch,
                  leaseUntil: activation.leaseExpiresAt,
                });
              }
            } else if (a.kind === "renew") {
              const h = held.get(a.worker);
              if (!h) continue;
              const ok = await fx.stores.dispatch.renew(fx.runId, h.owner, h.epoch, LEASE_MS);
              const shouldHold = !settled && h.epoch === highestEpoch && h.leaseUntil > now;
              expect(ok).toBe(shouldHold);
              if (ok) h.leaseUntil = now + LEASE_MS;
            } else if (a.kind === "commit") {
              const h = held.get(a.worker);
              if (!h) continue;
              const version = await fx.stores.history.threadVersion(fx.session.threadId);
              const operation = op(fx, h, version, a.facts, a.settle ? "done" : undefined, ++attempts);
              const result = await fx.stores.dispatch.commit(operation);
              const mayCommit = !settled && h.epoch === highestEpoch && h.leaseUntil > now;
              expect(result.ok).toBe(mayCommit);
              if (result.ok) {
                expect(result.duplicate).toBe(false);
                acknowledged.push(...result.receipt.eventIds);
                if (a.settle) settled = true;
              }
              lastOp.set(a.worker, { op: operation, receipt: result.ok ? result.receipt : null });
            } else if (a.kind === "retryLast") {
              const last = lastOp.get(a.worker);
              if (!last) continue;
              const result = await fx.stores.dispatch.commit(last.op);
              if (last.receipt) {
                // A retry of an acknowledged operation returns the original receipt and appends nothing.
                expect(result).toEqual({ ok: true, receipt: last.receipt, duplicate: true });
              } else {
                expect(result.ok).toBe(false);
              }
            }
          }

          const history = await fx.stores.history.readThread(fx.session.threadId, 0);
          // Contiguous versions: no gap, no two facts at one version.
          expect(history.map((f) => f.seq)).toEqual(history.map((_, i) => i + 1));
          expect(new Set(history.map((f) => f.id)).size).toBe(history.length);
          // Every acknowledged fact is in history, in acknowledgement order, and nothing else was added.
          expect(history.slice(initialVersion).map((f) => f.id)).toEqual(acknowledged);
        } finally {
          await fx.handle.close();
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
