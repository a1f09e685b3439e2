import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainInput } from "../../src/coordinator/domainInputs.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import type {
  Activation,
  CoordinatorStores,
  IdleSlot,
  IdleSlots,
  SessionRecord,
} from "../../src/coordinator/ports.js";
import { SessionService } from "../../src/coordinator/sessionService.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { newId } from "../../src/kernel/ids.js";
import { openPostgres, type PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { StatementCounter } from "../../src/stores/postgres/statementCounter.js";
import {
  openTestPostgres,
  postgresUnavailable,
  type TestPostgres,
  testDatabaseUrl,
} from "../support/postgresFixtures.js";
import { ManualClock, seedSession } from "../support/storeFixtures.js";

/**
 * A send on PostgreSQL that knows its session claims the run it starts or resumes for an idle
 * in-process slot in its own statement: the slot gets the activation a claim statement would have
 * returned, and no claim, wake-up or read is spent. Whatever moved meanwhile (resources added by
 * another replica, no slot idle), the run is queued and announced as before.
 */
const text = (t: string) => [{ type: "text" as const, text: t }];
const message = (t: string): DomainInput => ({ kind: "message", content: text(t) });

/** Idle slots a test controls: how many are idle, and what each reservation ended with. */
class TestSlots implements IdleSlots {
  idle = 1;
  readonly delivered: Activation[] = [];
  released = 0;

  reserve(): IdleSlot | null {
    if (this.idle === 0) return null;
    this.idle -= 1;
    return {
      owner: `local.test/${this.delivered.length}`,
      leaseMs: 10_000,
      deliver: (activation) => {
        this.delivered.push(activation);
      },
      release: () => {
        this.released += 1;
        this.idle += 1;
      },
    };
  }
}

interface Replica {
  stores: CoordinatorStores;
  service: SessionService;
  /** Dispatch signals this replica sent (one per run announced claimable). */
  dispatched: Array<string | null>;
}

function replica(handle: PostgresHandle, clock: ManualClock, slots?: IdleSlots): Replica {
  const stores = postgresCoordinatorStores(handle, clock, undefined, slots);
  const signals = new InProcessWakeSignals();
  const dispatched: Array<string | null> = [];
  signals.onDispatchReady((runId) => dispatched.push(runId));
  const ports = { ...stores, signals, evidence: new InProcessLiveEvidenceBus() };
  return { stores, service: new SessionService(ports, clock), dispatched };
}

let fixture: TestPostgres | undefined;
let counted: PostgresHandle | undefined;
let clock: ManualClock;
let counter: StatementCounter;
let slots: TestSlots;
let a: Replica;
let b: Replica;
let session: SessionRecord;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
  counter = new StatementCounter();
  counted = await openPostgres(testDatabaseUrl(), {
    schema: fixture.schema,
    maxConnections: 2,
    statementCounter: counter,
  });
  clock = new ManualClock();
  slots = new TestSlots();
  a = replica(counted, clock, slots);
  b = replica(await fixture.openReplica(), clock);
  const warm = await seedSession(a.stores, clock);
  session = await seedSession(a.stores, clock, { environmentId: warm.environmentId });
  // A's claims have seen the environment's revision once (its config never changes): a run of
  // another session on it, sent while no slot was idle, claimed and run to its end.
  slots.idle = 0;
  await a.service.send(warm.workspaceId, warm.id, [message("warm up")], {});
  await endRun((await a.stores.dispatch.claim("local.warm/0", 10_000))!);
  slots.idle = 1;
  a.dispatched.length = 0;
});
afterEach(async () => {
  await counted?.close();
  counted = undefined;
  await fixture?.dispose();
  fixture = undefined;
});

/** The claimed run's slice ends it, committing nothing more (replica A's fence). */
async function endRun(claim: Activation): Promise<void> {
  const ended = await a.stores.dispatch.commit({
    opId: `op_${claim.runId}_v${claim.history.length}`,
    runId: claim.runId,
    threadId: claim.threadId,
    owner: claim.owner,
    epoch: claim.epoch,
    expectedVersion: claim.history.length,
    facts: [],
    settle: "done",
  });
  expect(ended.ok).toBe(true);
}

const send = (r: Replica, inputs: DomainInput[]) =>
  r.service.send(session.workspaceId, session.id, inputs, {});

async function statementsOf(work: () => Promise<unknown>): Promise<number> {
  const before = counter.statements;
  await work();
  return counter.statements - before;
}

const runsOf = async () =>
  (
    await fixture!.handle.db
      .selectFrom("runs")
      .select(["id", "state", "owner", "epoch", "crash_count"])
      .where("session_id", "=", session.id)
      .execute()
  ).map((r) => ({ ...r, epoch: Number(r.epoch), crash_count: Number(r.crash_count) }));

/** What a claim decides from what it reads: everything but who claims, when, and the lease. */
function claimedContent(activation: Activation) {
  const {
    owner: _o,
    epoch: _e,
    leaseExpiresAt: _l,
    claimableSince: _c,
    reclaimed: _r,
    ...content
  } = activation;
  return content;
}

/**
 * The handed-off run given back and claimed by replica B, which knows nothing of the session: its
 * claim statement reads what the slot was told.
 */
async function claimedByAnotherReplica(handed: Activation): Promise<Activation> {
  await a.stores.dispatch.release(handed.runId, handed.owner, handed.epoch);
  const claimed = await b.stores.dispatch.claim("remote.b/0", 10_000, handed.runId);
  expect(claimed?.runId).toBe(handed.runId);
  return claimed!;
}

describe("a PostgreSQL send that hands its run to an idle slot", () => {
  it("claims the run a session's first send starts in that send's one statement, as a claim would", async () => {
    expect(await statementsOf(() => send(a, [message("go")]))).toBe(1);
    expect(slots.delivered).toHaveLength(1);
    const handed = slots.delivered[0]!;
    expect(await runsOf()).toEqual([
      { id: handed.runId, state: "claimed", owner: handed.owner, epoch: 1, crash_count: 0 },
    ]);
    expect(handed).toMatchObject({ epoch: 1, crashCount: 0, reclaimed: false, sessionId: session.id });
    expect(handed.leaseExpiresAt).toBe(clock.now() + 10_000);
    // Claimed: nothing announces it, so no other slot claims into an empty queue.
    expect(a.dispatched).toEqual([]);
    const claimed = await claimedByAnotherReplica(handed);
    expect(claimedContent(handed)).toEqual(claimedContent(claimed));
    expect(handed.history.map((f) => f.type)).toEqual(["user.message", "session.status_running"]);
  });

  it("runs a whole custom-tool turn on hand-offs: send, parked commit, answer, one statement each", async () => {
    expect(await statementsOf(() => send(a, [message("go")]))).toBe(1);
    const first = slots.delivered[0]!;
    const callId = newId("sevt", clock.now());
    // The slot's commit needs no read: the hand-off left the thread's head where the commit starts.
    const parked = await statementsOf(async () => {
      const result = await a.stores.dispatch.commit({
        opId: `op_${first.runId}_v${first.history.length}`,
        runId: first.runId,
        threadId: session.threadId,
        owner: first.owner,
        epoch: first.epoch,
        expectedVersion: first.history.length,
        facts: [{ id: callId, type: "agent.custom_tool_use", body: { name: "lookup", input: {} } }],
        settle: "awaiting",
      });
      expect(result.ok).toBe(true);
    });
    expect(parked).toBe(1);
    slots.idle = 1;

    const answer: DomainInput = { kind: "tool_result", callId, content: text("42"), isError: false };
    expect(await statementsOf(() => send(a, [answer]))).toBe(1);
    expect(slots.delivered).toHaveLength(2);
    const resumed = slots.delivered[1]!;
    expect(resumed).toMatchObject({ runId: first.runId, epoch: 2, crashCount: 0 });
    expect(await runsOf()).toEqual([
      { id: first.runId, state: "claimed", owner: resumed.owner, epoch: 2, crash_count: 0 },
    ]);
    expect(a.dispatched).toEqual([]);
    expect(claimedContent(resumed)).toEqual(claimedContent(await claimedByAnotherReplica(resumed)));
  });

  it("queues the run and announces it when no slot is idle, or the send does not know the session", async () => {
    slots.idle = 0;
    expect(await statementsOf(() => send(a, [message("go")]))).toBe(1);
    const [run] = await runsOf();
    expect(run).toMatchObject({ state: "queued", owner: null, epoch: 0 });
    expect(a.dispatched).toEqual([run!.id]);

    // Replica B knew nothing of the session: it reads, decides and queues; its slots are not A's.
    await endRun((await a.stores.dispatch.claim("local.a/0", 10_000))!);
    slots.idle = 1;
    await send(b, [message("from b")]);
    expect(slots.delivered).toEqual([]);
    expect((await runsOf()).filter((r) => r.state === "queued")).toHaveLength(1);
  });

  it("does not hand a run off on stale knowledge: resources another replica added since are seen, and the run queued", async () => {
    const now = clock.now();
    await fixture!.handle.db
      .insertInto("session_resources")
      .values({
        id: newId("sesrsc", now),
        workspace_id: session.workspaceId,
        session_id: session.id,
        type: "file",
        mount_path: "/mnt/session/uploads/notes.txt",
        file_id: newId("file", now),
        memory_store_id: null,
        access: null,
        name: null,
        description: null,
        instructions: null,
        url: null,
        checkout_json: null,
        token_sealed: null,
        token_revision: 0,
        created_at: now,
        updated_at: now,
      })
      .execute();
    // The known send's statement writes nothing, the slot goes back, and the send reads and queues.
    expect(await statementsOf(() => send(a, [message("go")]))).toBe(3);
    expect(slots.released).toBe(1);
    expect(slots.delivered).toEqual([]);
    const [run] = await runsOf();
    expect(run).toMatchObject({ state: "queued", epoch: 0 });
    expect(a.dispatched).toEqual([run!.id]);
    const claimed = await b.stores.dispatch.claim("remote.b/0", 10_000);
    expect(claimed?.sessionHasResources).toBe(true);
  });
});
