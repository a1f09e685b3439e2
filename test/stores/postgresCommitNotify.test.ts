import { afterEach, beforeEach, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { newId } from "../../src/kernel/ids.js";
import { NotifyWakeSignals } from "../../src/stores/postgres/notifyWakeSignals.js";
import type { PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import {
  openTestPostgres,
  postgresUnavailable,
  type TestPostgres,
  testDatabaseUrl,
} from "../support/postgresFixtures.js";
import { ManualClock, seedSession } from "../support/storeFixtures.js";

// Replica A commits through stores that carry their NOTIFY in the committing statement; replica B
// only listens. B hearing a signal A never published proves the commit carried it.
let fixture: TestPostgres | undefined;
const opened: NotifyWakeSignals[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  await fixture?.dispose();
  fixture = undefined;
});

async function signalsOn(handle: PostgresHandle): Promise<NotifyWakeSignals> {
  const signals = new NotifyWakeSignals({
    db: handle.db,
    connectionString: testDatabaseUrl(),
    schema: fixture!.schema,
    log: { info: () => {}, warn: () => {} },
  });
  opened.push(signals);
  await signals.whenListening();
  return signals;
}

/** Resolves when `heard` holds `entry` (B's listeners push into it). */
function heardOn(heard: string[], entry: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`B never heard ${entry}: ${heard.join(", ")}`)), 5_000);
    const check = setInterval(() => {
      if (!heard.includes(entry)) return;
      clearInterval(check);
      clearTimeout(timer);
      resolve();
    }, 5);
  });
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

it("input appends and fenced commits notify other replicas in their own statement, once, and only when written", async () => {
  const a = await signalsOn(fixture!.handle);
  const b = await signalsOn(await fixture!.openReplica());
  const clock = new ManualClock();
  const stores = postgresCoordinatorStores(fixture!.handle, clock, a);
  const thread = newId("sthr", clock.now());
  const heard: string[] = [];
  const onA: string[] = [];
  b.onThreadCommitted(thread, (v) => heard.push(`thread:${v}`));
  b.onDispatchReady(() => heard.push("dispatch"));
  b.onRunCancelled((run) => heard.push(`cancel:${run}`));
  a.onThreadCommitted(thread, (v) => onA.push(`thread:${v}`));

  // A new session's statement carries its thread's first notice (version 0).
  const session = await seedSession(stores, clock, { threadId: thread });
  await heardOn(heard, "thread:0");

  // Nothing below publishes on A but the commits themselves, until the coordinator's signals are
  // sent too (each right after its commit, as the coordinator does).
  const userMessage = () => ({
    id: newId("sevt", clock.now()),
    type: "user.message",
    body: { content: [{ type: "text", text: "hi" }] },
  });
  // An input append that starts a run: its signals are a dispatch and the thread's new version.
  const runId = newId("run", clock.now());
  await stores.ledger.append(
    session.id,
    () => ({ facts: [userMessage()], effects: [{ kind: "start", runId }], echoIds: [] }),
    clock.now(),
  );
  await heardOn(heard, "dispatch");
  await heardOn(heard, "thread:1");

  // A fenced commit through the function (this store claimed, so it knows the projection).
  clock.advance(1);
  const claim = (await stores.dispatch.claim("w1", 60_000))!;
  expect(claim.runId).toBe(runId);
  const op = (n: number, epoch = claim.epoch): CommitOperation => ({
    opId: newId("op", clock.now()),
    runId,
    threadId: thread,
    owner: claim.owner,
    epoch,
    expectedVersion: n,
    facts: [
      {
        id: newId("sevt", clock.now()),
        type: "agent.message",
        body: { content: [{ type: "text", text: "x" }] },
      },
    ],
  });
  expect(await stores.dispatch.commit(op(1))).toMatchObject({ ok: true, duplicate: false });
  await heardOn(heard, "thread:2");

  // A stale commit is refused: it writes nothing and notifies nothing.
  expect((await stores.dispatch.commit(op(2, claim.epoch - 1))).ok).toBe(false);

  // The locked path: a store that never claimed knows no projection.
  const other = postgresCoordinatorStores(fixture!.handle, clock, a);
  expect(await other.dispatch.commit(op(2))).toMatchObject({ ok: true, duplicate: false });
  await heardOn(heard, "thread:3");

  // The coordinator's signal right after a commit reaches A's listeners at once and is not
  // published again: a fenced commit, then an input append.
  expect(await stores.dispatch.commit(op(3))).toMatchObject({ ok: true, duplicate: false });
  a.threadCommitted(thread, 4);
  expect(onA).toEqual(["thread:4"]);
  const input = await stores.ledger.append(
    session.id,
    () => ({ facts: [userMessage()], effects: [], echoIds: [] }),
    clock.now(),
  );
  a.threadCommitted(thread, input.committed[0]!.seq);
  expect(onA).toEqual(["thread:4", "thread:5"]);

  // A signal of a later turn is published (nothing carried it): once B hears it, every
  // notification committed before it has arrived, so B's list is complete.
  await nextTurn();
  a.runCancelled("run_sentinel");
  await heardOn(heard, "cancel:run_sentinel");
  expect(heard).toEqual([
    "thread:0",
    "dispatch",
    "thread:1",
    "thread:2",
    "thread:3",
    "thread:4",
    "thread:5",
    "cancel:run_sentinel",
  ]);
});
