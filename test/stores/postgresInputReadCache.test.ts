import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainInput } from "../../src/coordinator/domainInputs.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import type { CoordinatorStores, SessionRecord } from "../../src/coordinator/ports.js";
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
 * The input append's remembered read on PostgreSQL: a send right after this process created the
 * session, or after its worker parked the turn, writes in one statement; whatever another replica
 * did meanwhile, the decision is still made on the session as it is.
 */
const text = (t: string) => [{ type: "text" as const, text: t }];
const message = (t: string): DomainInput => ({ kind: "message", content: text(t) });

interface Replica {
  stores: CoordinatorStores;
  service: SessionService;
}

function replica(handle: PostgresHandle, clock: ManualClock): Replica {
  const stores = postgresCoordinatorStores(handle, clock);
  const ports = { ...stores, signals: new InProcessWakeSignals(), evidence: new InProcessLiveEvidenceBus() };
  return { stores, service: new SessionService(ports, clock) };
}

let fixture: TestPostgres | undefined;
let counted: PostgresHandle | undefined;
let clock: ManualClock;
let counter: StatementCounter;
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
  a = replica(counted, clock);
  b = replica(await fixture.openReplica(), clock);
  session = await seedSession(a.stores, clock);
});
afterEach(async () => {
  await counted?.close();
  counted = undefined;
  await fixture?.dispose();
  fixture = undefined;
});

const send = (r: Replica, inputs: DomainInput[]) =>
  r.service.send(session.workspaceId, session.id, inputs, {});

/** The statements `work` sent on replica A's pool. */
async function statementsOf(work: () => Promise<unknown>): Promise<number> {
  const before = counter.statements;
  await work();
  return counter.statements - before;
}

/** A's worker claims the run and parks it on a custom tool call; returns the call's id. */
async function parkOnA(): Promise<string> {
  const claim = (await a.stores.dispatch.claim("w1", 10_000))!;
  const callId = newId("sevt", clock.now());
  const version = await a.stores.history.threadVersion(session.threadId);
  const parked = await a.stores.dispatch.commit({
    opId: `op_${claim.runId}_v${version}`,
    runId: claim.runId,
    threadId: session.threadId,
    owner: claim.owner,
    epoch: claim.epoch,
    expectedVersion: version,
    facts: [{ id: callId, type: "agent.custom_tool_use", body: { name: "lookup", input: {} } }],
    settle: "awaiting",
  });
  expect(parked.ok).toBe(true);
  return callId;
}

const runsOf = async () =>
  (
    await fixture!.handle.db
      .selectFrom("runs")
      .select(["id", "state", "epoch"])
      .where("session_id", "=", session.id)
      .execute()
  ).map((r) => ({ ...r, epoch: Number(r.epoch) }));

describe("the PostgreSQL input append's remembered read", () => {
  it("a session's first send, and its send after this process parked the turn, are one statement each", async () => {
    expect(await statementsOf(() => send(a, [message("go")]))).toBe(1);
    const callId = await parkOnA();
    const answer: DomainInput = { kind: "tool_result", callId, content: text("42"), isError: false };
    expect(await statementsOf(() => send(a, [answer]))).toBe(1);
    expect(await runsOf()).toMatchObject([{ state: "queued", epoch: 1 }]);
    // That entry served its send: the next one reads again.
    expect(await statementsOf(() => send(a, [message("more")]))).toBe(2);
  });

  it("another replica's answer to the parked call is seen: the same answer sent here is refused, nothing doubled", async () => {
    await send(a, [message("go")]);
    const callId = await parkOnA();
    const answer: DomainInput = { kind: "tool_result", callId, content: text("42"), isError: false };
    await send(b, [answer]);
    const fresh = await send(b, [answer]).then(
      () => null,
      (error: unknown) => error,
    );
    const remembered = await send(a, [answer]).then(
      () => null,
      (error: unknown) => error,
    );
    expect(fresh).not.toBeNull();
    expect(remembered).toEqual(fresh);
    const history = await a.stores.history.readThread(session.threadId, 0);
    expect(history.filter((f) => f.type === "user.custom_tool_result")).toHaveLength(1);
    expect(await runsOf()).toMatchObject([{ state: "queued", epoch: 1 }]);
  });

  it("another replica's interrupt, update and delete are each seen by the next send here", async () => {
    await send(a, [message("go")]);
    const callId = await parkOnA();
    // An update on B changes the session row only: A's remembered row is refused by its version.
    await b.service.update(session.workspaceId, session.id, { title: "renamed" });
    await send(a, [{ kind: "tool_result", callId, content: text("42"), isError: false }]);
    const afterUpdate = await a.stores.sessions.get(session.workspaceId, session.id);
    expect(afterUpdate).toMatchObject({ title: "renamed", status: "running" });

    // An interrupt sent on B is a commit A did not see: A's next send is decided on the session as
    // it is, and leaves one active run.
    await parkOnA();
    await send(b, [{ kind: "interrupt" }]);
    await send(a, [message("after the interrupt")]);
    const runs = await runsOf();
    expect(runs.filter((r) => ["queued", "claimed", "awaiting"].includes(r.state))).toHaveLength(1);

    await b.service.delete(session.workspaceId, session.id);
    await expect(send(a, [message("gone")])).rejects.toMatchObject({ code: "not_found" });
  });
});
