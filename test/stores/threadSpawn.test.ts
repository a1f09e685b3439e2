import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { encodeFact } from "../../src/coordinator/factCodec.js";
import type { ExecutableAgentSnapshot } from "../../src/coordinator/ports.js";
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

/** The child's pinned agent: another agent and version than the session's. */
const CHILD_AGENT: ExecutableAgentSnapshot = {
  ...TEST_AGENT,
  agentId: "agent_researcher",
  version: 3,
  fingerprint: "child",
  definition: { ...TEST_AGENT.definition, name: "researcher", system: "You research." },
};

/** The parent run's commit that spawns one child: `thread_created` + the task sent, with the spawn. */
function spawningCommit(
  f: Fixture,
  claim: { owner: string; epoch: number },
  version: number,
): CommitOperation {
  const now = f.clock.now();
  const childThreadId = `sthr_child_${f.runId}`;
  return {
    opId: `op_${f.runId}_v${version}`,
    runId: f.runId,
    threadId: f.session.threadId,
    owner: claim.owner,
    epoch: claim.epoch,
    expectedVersion: version,
    facts: [
      encodeFact({
        id: newId("sevt", now),
        kind: "thread_created",
        thread: childThreadId,
        agentName: "researcher",
        workflowRun: null,
      }),
      encodeFact({
        id: newId("sevt", now),
        kind: "thread_message_sent",
        toThread: childThreadId,
        toAgentName: "researcher",
        content: [{ type: "text", text: "find it" }],
      }),
    ],
    settle: "awaiting",
    spawns: [
      {
        threadId: childThreadId,
        runId: `run_child_${f.runId}`,
        agentName: "researcher",
        agent: CHILD_AGENT,
        facts: [
          encodeFact({
            id: newId("sevt", now),
            kind: "thread_message_received",
            fromThread: f.session.threadId,
            fromAgentName: null,
            content: [{ type: "text", text: "find it" }],
          }),
        ],
      },
    ],
  };
}

describe.each(BACKEND_NAMES)("a run spawns a child thread in its fenced commit: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  it("writes the child's row, first input and run with the parent's facts; the child's claim runs its own agent", async () => {
    fx = await sessionWithQueuedRun(backend);
    const parent = (await fx.stores.dispatch.claim("w1", 60_000))!;
    expect(parent.agent.agentId).toBe(TEST_AGENT.agentId);
    const op = spawningCommit(fx, parent, 1);
    const result = await fx.stores.dispatch.commit(op);
    expect(result.ok).toBe(true);
    // A retry of the same commit is its duplicate: no second child.
    const retried = await fx.stores.dispatch.commit(op);
    expect(retried).toMatchObject({ ok: true, duplicate: true });

    const threads = await fx.stores.sessions.listThreads(fx.session, { limit: 10, cursor: null });
    expect(threads.data.map((t) => [t.id, t.parentThreadId, t.agent?.agentId ?? null])).toEqual([
      [fx.session.threadId, null, null],
      [`sthr_child_${fx.runId}`, fx.session.threadId, CHILD_AGENT.agentId],
    ]);
    const parentHistory = await fx.stores.history.readThread(fx.session.threadId, 0);
    expect(parentHistory.map((f) => f.type)).toEqual([
      "user.message",
      "session.thread_created",
      "agent.thread_message_sent",
    ]);

    // The parent waits for its child (parked); the child's run is claimed like any run, fenced with its own epoch, with the child's agent.
    const child = (await fx.stores.dispatch.claim("w2", 60_000))!;
    expect(child.runId).toBe(`run_child_${fx.runId}`);
    expect(child.threadId).toBe(`sthr_child_${fx.runId}`);
    expect(child.agent).toEqual(CHILD_AGENT);
    expect(child.history.map((f) => f.type)).toEqual(["agent.thread_message_received"]);
    expect(await fx.stores.dispatch.claim("w3", 60_000)).toBeNull();

    // The child's turn ends with its answer on the parent's history, in the same fenced commit,
    // which resumes the parent (nothing else is pending there).
    const now = fx.clock.now();
    const answered = await fx.stores.dispatch.commit({
      opId: `op_${child.runId}_v1`,
      runId: child.runId,
      threadId: child.threadId,
      owner: child.owner,
      epoch: child.epoch,
      expectedVersion: 1,
      facts: [
        encodeFact({
          id: newId("sevt", now),
          kind: "agent_message",
          content: [{ type: "text", text: "found" }],
        }),
      ],
      settle: "done",
      answer: {
        parentThreadId: fx.session.threadId,
        facts: [
          encodeFact({
            id: newId("sevt", now),
            kind: "thread_message_received",
            fromThread: child.threadId,
            fromAgentName: "researcher",
            content: [{ type: "text", text: "found" }],
          }),
        ],
      },
    });
    expect(answered).toMatchObject({ ok: true, duplicate: false, receipt: { answeredVersion: 4 } });
    expect((await fx.stores.history.readThread(fx.session.threadId, 3)).map((f) => f.type)).toEqual([
      "agent.thread_message_received",
    ]);
    const resumed = (await fx.stores.dispatch.claim("w4", 60_000))!;
    expect(resumed.runId).toBe(fx.runId);
    expect(resumed.history).toHaveLength(4);
  });

  it("a child's answer leaves its parent parked while another child it spawned has not answered", async () => {
    fx = await sessionWithQueuedRun(backend);
    const parent = (await fx.stores.dispatch.claim("w1", 60_000))!;
    const op = spawningCommit(fx, parent, 1);
    const second = { ...op.spawns![0]!, threadId: "sthr_second", runId: "run_second" };
    const secondCreated = encodeFact({
      id: newId("sevt", fx.clock.now()),
      kind: "thread_created",
      thread: "sthr_second",
      agentName: "researcher",
      workflowRun: null,
    });
    expect(
      (
        await fx.stores.dispatch.commit({
          ...op,
          facts: [...op.facts, secondCreated],
          spawns: [...op.spawns!, second],
        })
      ).ok,
    ).toBe(true);
    const child = (await fx.stores.dispatch.claim("w2", 60_000))!;
    const answer = (from: string) =>
      encodeFact({
        id: newId("sevt", fx.clock.now()),
        kind: "thread_message_received",
        fromThread: from,
        fromAgentName: "researcher",
        content: [],
      });
    const first = await fx.stores.dispatch.commit({
      opId: `op_${child.runId}_v1`,
      runId: child.runId,
      threadId: child.threadId,
      owner: child.owner,
      epoch: child.epoch,
      expectedVersion: 1,
      facts: [],
      settle: "done",
      answer: { parentThreadId: fx.session.threadId, facts: [answer(child.threadId)] },
    });
    expect(first.ok).toBe(true);
    const other = (await fx.stores.dispatch.claim("w3", 60_000))!;
    expect(other.threadId).not.toBe(fx.session.threadId);
    expect(await fx.stores.dispatch.claim("w4", 60_000)).toBeNull();
    await fx.stores.dispatch.commit({
      opId: `op_${other.runId}_v1`,
      runId: other.runId,
      threadId: other.threadId,
      owner: other.owner,
      epoch: other.epoch,
      expectedVersion: 1,
      facts: [],
      settle: "done",
      answer: { parentThreadId: fx.session.threadId, facts: [answer(other.threadId)] },
    });
    expect((await fx.stores.dispatch.claim("w5", 60_000))?.runId).toBe(fx.runId);
  });

  it("a child's answer whose parent version is taken between its read and its write decides again and lands once", async () => {
    fx = await sessionWithQueuedRun(backend);
    const parent = (await fx.stores.dispatch.claim("w1", 60_000))!;
    expect((await fx.stores.dispatch.commit(spawningCommit(fx, parent, 1))).ok).toBe(true);
    const child = (await fx.stores.dispatch.claim("w2", 60_000))!;
    // A user's message to the parent lands right after the answer read the parent's head (the
    // PostgreSQL store reads it with a plain query; SQLite's single writer leaves no such gap).
    const pool = (fx.stores.dispatch as unknown as { pool?: { query: (...a: unknown[]) => unknown } }).pool;
    let interleaved = false;
    // No statement may fail on the way: a write path is never chosen by catching an error code.
    const failed: string[] = [];
    if (pool) {
      const query = pool.query.bind(pool);
      pool.query = async (...args: unknown[]) => {
        const result = await Promise.resolve(query(...args)).catch((error: { code?: string }) => {
          failed.push(error.code ?? String(error));
          throw error;
        });
        const text = typeof args[0] === "string" ? args[0] : "";
        if (!interleaved && text.includes("state = 'awaiting'")) {
          interleaved = true;
          await fx.stores.ledger.append(
            fx.session.id,
            () => ({
              facts: [
                encodeFact({
                  id: newId("sevt", fx.clock.now()),
                  kind: "user_message",
                  content: [{ type: "text", text: "meanwhile" }],
                }),
              ],
              effects: [],
              echoIds: [],
            }),
            fx.clock.now(),
          );
        }
        return result;
      };
    }
    const answered = await fx.stores.dispatch.commit({
      opId: `op_${child.runId}_v1`,
      runId: child.runId,
      threadId: child.threadId,
      owner: child.owner,
      epoch: child.epoch,
      expectedVersion: 1,
      facts: [],
      settle: "done",
      answer: {
        parentThreadId: fx.session.threadId,
        facts: [
          encodeFact({
            id: newId("sevt", fx.clock.now()),
            kind: "thread_message_received",
            fromThread: child.threadId,
            fromAgentName: "researcher",
            content: [{ type: "text", text: "found" }],
          }),
        ],
      },
    });
    expect(answered.ok).toBe(true);
    expect(failed).toEqual([]);
    expect(interleaved).toBe(backend === "PostgreSQL stores");
    const kinds = (await fx.stores.history.readThread(fx.session.threadId, 0)).map((f) => f.type);
    expect(kinds.filter((k) => k === "agent.thread_message_received")).toHaveLength(1);
    // The answer was planned again on the version the message left.
    if (interleaved)
      expect(kinds.lastIndexOf("user.message")).toBeLessThan(
        kinds.lastIndexOf("agent.thread_message_received"),
      );
  });

  it("a spawn whose parent commit is refused writes nothing", async () => {
    fx = await sessionWithQueuedRun(backend);
    const parent = (await fx.stores.dispatch.claim("w1", 60_000))!;
    const stale = await fx.stores.dispatch.commit(
      spawningCommit(fx, { ...parent, epoch: parent.epoch + 5 }, 1),
    );
    expect(stale.ok).toBe(false);
    const threads = await fx.stores.sessions.listThreads(fx.session, { limit: 10, cursor: null });
    expect(threads.data).toHaveLength(1);
    expect(await fx.stores.dispatch.claim("w2", 60_000)).toBeNull();
  });
});
