/**
 * Inputs that reach child threads, through each backend's input ledger and commit fence: the
 * interrupt's writes on the primary and on every child land in one append, the child's run is
 * fenced off (its late commit, and the answer it would carry to its parent, are refused), and a
 * child interrupted alone answers its parked parent, which is queued again.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import type { DomainInput } from "../../src/coordinator/domainInputs.js";
import { encodeFact } from "../../src/coordinator/factCodec.js";
import { planInputs } from "../../src/coordinator/inputRules.js";
import { newId } from "../../src/kernel/ids.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  sessionWithQueuedRun,
  TEST_AGENT,
} from "../support/storeFixtures.js";

type Fixture = Awaited<ReturnType<typeof sessionWithQueuedRun>>;
let fx: Fixture;
afterEach(async () => {
  await fx?.handle.close();
});

const childOf = (f: Fixture) => `sthr_call_${f.runId}`;

/** The parent's run spawns one child and parks on it; the child's run is claimed. */
async function parentWaitingOnWorkingChild(f: Fixture) {
  const parent = (await f.stores.dispatch.claim("w1", 60_000))!;
  const now = f.clock.now();
  const child = childOf(f);
  const spawned = await f.stores.dispatch.commit({
    opId: `op_${f.runId}_v1`,
    runId: f.runId,
    threadId: f.session.threadId,
    owner: parent.owner,
    epoch: parent.epoch,
    expectedVersion: 1,
    facts: [
      encodeFact({
        id: newId("sevt", now),
        kind: "thread_created",
        thread: child,
        agentName: "researcher",
        workflowRun: null,
      }),
    ],
    settle: "awaiting",
    spawns: [
      {
        threadId: child,
        runId: `run_call_${f.runId}`,
        agentName: "researcher",
        agent: { ...TEST_AGENT, definition: { ...TEST_AGENT.definition, name: "researcher" } },
        facts: [
          encodeFact({
            id: newId("sevt", now),
            kind: "thread_message_received",
            fromThread: f.session.threadId,
            fromAgentName: null,
            content: [{ type: "text", text: "find it" }],
          }),
          encodeFact({ id: newId("sevt", now), kind: "status_running" }),
        ],
      },
    ],
  });
  expect(spawned.ok).toBe(true);
  const claimed = (await f.stores.dispatch.claim("w2", 60_000))!;
  expect(claimed.threadId).toBe(child);
  return claimed;
}

/** The child's late turn-ending commit with its answer to the parent, under the claim it held. */
function lateChildCommit(
  f: Fixture,
  claim: { runId: string; owner: string; epoch: number },
): CommitOperation {
  const now = f.clock.now();
  return {
    opId: `op_${claim.runId}_v2`,
    runId: claim.runId,
    threadId: childOf(f),
    owner: claim.owner,
    epoch: claim.epoch,
    expectedVersion: 2,
    facts: [
      encodeFact({
        id: newId("sevt", now),
        kind: "agent_message",
        content: [{ type: "text", text: "late" }],
      }),
    ],
    settle: "done",
    answer: {
      parentThreadId: f.session.threadId,
      facts: [
        encodeFact({
          id: newId("sevt", now),
          kind: "thread_message_received",
          fromThread: childOf(f),
          fromAgentName: "researcher",
          content: [{ type: "text", text: "late" }],
        }),
      ],
    },
  };
}

const send = (f: Fixture, inputs: DomainInput[]) => {
  const now = f.clock.now();
  return f.stores.ledger.append(f.session.id, (ctx) => planInputs(ctx, inputs, now), now);
};

const types = async (f: Fixture, threadId: string) =>
  (await f.stores.history.readThread(threadId, 0)).map((fact) => fact.type);

describe.each(BACKEND_NAMES)("inputs that reach child threads: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  it("an interrupt without a thread cancels the parent's and the child's runs in one append; the child's late commit is refused", async () => {
    fx = await sessionWithQueuedRun(backend);
    const child = await parentWaitingOnWorkingChild(fx);
    const outcome = await send(fx, [{ kind: "interrupt" }]);
    expect(outcome.threads?.map((t) => [t.threadId, t.effects, t.activeRunId])).toEqual([
      [childOf(fx), [{ kind: "cancel" }], child.runId],
    ]);
    expect(outcome.plan.effects).toEqual([{ kind: "cancel" }]);
    expect((await types(fx, childOf(fx))).slice(-2)).toEqual(["user.interrupt", "session.status_idle"]);
    expect((await types(fx, fx.session.threadId)).slice(-3)).toEqual([
      "user.interrupt",
      "session.thread_status_idle",
      "session.status_idle",
    ]);

    // The cancelled child's late commit (and the answer it carries) is fenced out.
    const late = await fx.stores.dispatch.commit(lateChildCommit(fx, child));
    expect(late).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect((await types(fx, fx.session.threadId)).at(-1)).toBe("session.status_idle");
    // Nothing is left to run, and the session waits for nothing.
    expect(await fx.stores.dispatch.claim("w3", 60_000)).toBeNull();
    const session = await fx.stores.sessions.get(fx.session.workspaceId, fx.session.id);
    expect(session).toMatchObject({ status: "idle", pending: [] });
  });

  it("an interrupt naming the child stops it alone and answers its spawning call; the parked parent is queued again", async () => {
    fx = await sessionWithQueuedRun(backend);
    const child = await parentWaitingOnWorkingChild(fx);
    const outcome = await send(fx, [{ kind: "interrupt", targetThread: childOf(fx) }]);
    expect(outcome.plan.effects).toEqual([{ kind: "resume" }]);
    expect((await types(fx, childOf(fx))).slice(-2)).toEqual(["user.interrupt", "session.status_idle"]);
    const primary = await fx.stores.history.readThread(fx.session.threadId, 0);
    expect(primary.slice(-4).map((f) => f.type)).toEqual([
      "session.thread_status_idle",
      "agent.thread_message_received",
      "agent.tool_result",
      "session.status_running",
    ]);
    expect(primary.at(-2)?.body).toMatchObject({ tool_use_id: `call_${fx.runId}`, is_error: true });
    expect(await fx.stores.dispatch.commit(lateChildCommit(fx, child))).toMatchObject({ ok: false });
    const parent = await fx.stores.dispatch.claim("w3", 60_000);
    expect(parent?.runId).toBe(fx.runId);

    // An unknown thread id is refused before anything is written.
    const before = primary.length;
    await expect(send(fx, [{ kind: "interrupt", targetThread: "sthr_unknown" }])).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await fx.stores.history.readThread(fx.session.threadId, 0)).length).toBe(before);
  });

  it("a child's answer racing a session interrupt lands wholly before it or is fenced out", async () => {
    for (let round = 0; round < 5; round++) {
      await fx?.handle.close();
      fx = await sessionWithQueuedRun(backend);
      const child = await parentWaitingOnWorkingChild(fx);
      // Each goes first in turn, the other a little later: SQLite runs them in that order,
      // PostgreSQL races them.
      const later = <T>(run: () => Promise<T>) =>
        new Promise((resolve) => setTimeout(resolve, round)).then(run);
      const commit = () => fx.stores.dispatch.commit(lateChildCommit(fx, child));
      const interruptAll = () => send(fx, [{ kind: "interrupt" }]);
      const [answer, interrupt] =
        round % 2 === 0
          ? await Promise.all([later(commit), interruptAll()])
          : await Promise.all([commit(), later(interruptAll)]);
      const primary = await types(fx, fx.session.threadId);
      const own = await types(fx, childOf(fx));
      if (answer.ok) {
        // The answer first: the interrupt found no child working and stopped the parent alone.
        expect(interrupt.threads ?? []).toEqual([]);
        expect(primary.slice(-3)).toEqual([
          "agent.thread_message_received",
          "user.interrupt",
          "session.status_idle",
        ]);
        expect(own.at(-1)).toBe("agent.message");
      } else {
        expect(answer).toMatchObject({ rejection: { kind: "stale_claim" } });
        expect(primary.slice(-3)).toEqual([
          "user.interrupt",
          "session.thread_status_idle",
          "session.status_idle",
        ]);
        expect(own.slice(-2)).toEqual(["user.interrupt", "session.status_idle"]);
      }
      expect(await fx.stores.dispatch.claim("w3", 60_000)).toBeNull();
    }
  });
});
