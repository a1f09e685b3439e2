import fc from "fast-check";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { CommitOperation, CommitReceipt, CommitResult } from "../../src/coordinator/commitOperation.js";
import type { CoordinatorStores } from "../../src/coordinator/ports.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { openTestPostgres, type TestPostgres } from "../support/postgresFixtures.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  ManualClock,
  op,
  STORE_BACKENDS,
  type StoreBackend,
  seedQueuedRun,
} from "../support/storeFixtures.js";

// The commit fence when many sessions commit at once: every round, each session makes one move and
// all moves are sent together, so on PostgreSQL they reach the store in one event-loop turn and are
// decided in shared calls of `awaken_commit_append_v2` (two calls from 8 appends on), with every
// kind of refusal mixed into the same batches. The model says what each commit must answer; the
// histories say nothing was lost, duplicated or put at a taken version.
const SESSIONS = 6;
const LEASE_MS = 3_600_000;

type MoveKind = "none" | "commit" | "settle" | "stale" | "ahead" | "retry" | "twice";
interface Move {
  kind: MoveKind;
  facts: number;
}
const move: fc.Arbitrary<Move> = fc.record({
  kind: fc.constantFrom<MoveKind>("none", "commit", "commit", "settle", "stale", "ahead", "retry", "twice"),
  facts: fc.integer({ min: 0, max: 2 }),
});
const rounds = fc.array(fc.array(move, { minLength: SESSIONS, maxLength: SESSIONS }), {
  minLength: 1,
  maxLength: 6,
});

interface Model {
  fx: Awaited<ReturnType<typeof seedQueuedRun>>;
  claim: { owner: string; epoch: number };
  version: number;
  initialVersion: number;
  settled: boolean;
  last: { op: CommitOperation; receipt: CommitReceipt } | null;
  acknowledged: string[];
}

/** On PostgreSQL one schema for the file, emptied before each run (see commitFence.property). */
let sharedPostgres: TestPostgres | undefined;
afterAll(async () => {
  await sharedPostgres?.dispose();
  sharedPostgres = undefined;
});

async function freshStores(
  backend: StoreBackend,
  clock: ManualClock,
): Promise<{ stores: CoordinatorStores; close(): Promise<void> }> {
  if (backend !== "PostgreSQL stores") return STORE_BACKENDS[backend](clock);
  sharedPostgres ??= await openTestPostgres();
  const { handle } = sharedPostgres;
  await sharedPostgres.empty();
  return { stores: postgresCoordinatorStores(handle, clock), close: async () => {} };
}

describe.each(BACKEND_NAMES)("the commit fence, many sessions committing at once: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  it("answers every commit of a mixed batch as it would alone, and keeps every history whole", async () => {
    await fc.assert(
      fc.asyncProperty(rounds, async (plan) => {
        const clock = new ManualClock();
        const opened = await freshStores(backend, clock);
        const { stores } = opened;
        try {
          const fixtures = [];
          for (let i = 0; i < SESSIONS; i++) fixtures.push(await seedQueuedRun(stores, clock));
          const models = new Map<string, Model>();
          for (let i = 0; i < SESSIONS; i++) {
            const claim = (await stores.dispatch.claim(`w${i}`, LEASE_MS))!;
            const fx = fixtures.find((f) => f.runId === claim.runId)!;
            const version = await stores.history.threadVersion(fx.session.threadId);
            models.set(fx.runId, {
              fx,
              claim,
              version,
              initialVersion: version,
              settled: false,
              last: null,
              acknowledged: [],
            });
          }
          const ordered = fixtures.map((f) => models.get(f.runId)!);
          let attempt = 0;

          for (const moves of plan) {
            // Everything of the round is sent before anything is awaited.
            const checks: Promise<void>[] = [];
            for (const [i, m] of ordered.entries()) {
              const { kind, facts } = moves[i]!;
              const expectation = expectedFor(m, kind, facts, () => ++attempt);
              if (!expectation) continue;
              checks.push(expectation(stores));
            }
            await Promise.all(checks);
          }

          for (const m of ordered) {
            const history = await stores.history.readThread(m.fx.session.threadId, 0);
            expect(history.map((f) => f.seq)).toEqual(history.map((_, i) => i + 1));
            expect(new Set(history.map((f) => f.id)).size).toBe(history.length);
            expect(history.slice(m.initialVersion).map((f) => f.id)).toEqual(m.acknowledged);
            expect(history.length).toBe(m.version);
          }
        } finally {
          await opened.close();
        }
      }),
      { numRuns: backend === "PostgreSQL stores" ? 40 : 60 },
    );
  }, 180_000);
});

/**
 * Sends the commit(s) of one move (synchronously, so a round's commits share a turn) and returns
 * the check of their answers against the model, which it updates; null for no commit.
 */
function expectedFor(
  m: Model,
  kind: MoveKind,
  facts: number,
  nextAttempt: () => number,
): ((stores: CoordinatorStores) => Promise<void>) | null {
  const { fx, claim } = m;
  if (kind === "none" || (kind === "retry" && !m.last)) return null;
  return async (stores) => {
    if (kind === "retry") {
      const last = m.last!;
      expect(await stores.dispatch.commit(last.op)).toEqual({
        ok: true,
        receipt: last.receipt,
        duplicate: true,
      });
      return;
    }
    if (kind === "twice") {
      // Two operations at the same version, each with at least one fact: exactly one may land.
      const a = op(fx, claim, m.version, Math.max(1, facts), undefined, nextAttempt());
      const b = op(fx, claim, m.version, 1, undefined, nextAttempt());
      const [ra, rb] = await Promise.all([stores.dispatch.commit(a), stores.dispatch.commit(b)]);
      if (m.settled) {
        expect([ra.ok, rb.ok]).toEqual([false, false]);
        return;
      }
      expect([ra, rb].filter((r) => r.ok)).toHaveLength(1);
      const [won, wonOp, lost] = ra.ok ? [ra, a, rb] : [rb, b, ra];
      expect(lost).toMatchObject({ ok: false, rejection: { kind: "version_conflict" } });
      acknowledge(m, wonOp, won);
      return;
    }
    const settle = kind === "settle" ? ("done" as const) : undefined;
    const operation =
      kind === "stale"
        ? op(fx, { ...claim, epoch: claim.epoch - 1 }, m.version, facts, undefined, nextAttempt())
        : kind === "ahead"
          ? op(fx, claim, m.version + 1, facts, undefined, nextAttempt())
          : op(fx, claim, m.version, facts, settle, nextAttempt());
    const result = await stores.dispatch.commit(operation);
    if (kind === "stale") {
      expect(result).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    } else if (m.settled) {
      expect(result.ok).toBe(false);
    } else if (kind === "ahead") {
      expect(result).toMatchObject({ ok: false, rejection: { kind: "version_conflict" } });
    } else {
      expect(result).toMatchObject({ ok: true, duplicate: false });
      acknowledge(m, operation, result);
      if (settle) m.settled = true;
    }
  };
}

function acknowledge(m: Model, operation: CommitOperation, result: CommitResult): void {
  if (!result.ok) throw new Error("acknowledge: not ok");
  expect(result.receipt.versionAfter).toBe(m.version + operation.facts.length);
  m.version = result.receipt.versionAfter;
  m.acknowledged.push(...result.receipt.eventIds);
  m.last = { op: operation, receipt: result.receipt };
}
