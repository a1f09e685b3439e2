/**
 * A child thread answers its parent however its turn ends. The model's last answer is answered by
 * the model step itself; every other ending (the budget reached, retries exhausted, a failed
 * sandbox) goes through the run's one commit, which must carry the answer too: without it the
 * parent, parked until all its children answered, would wait for good.
 */
import { describe, expect, it } from "vitest";
import type { CommitOperation, CommitResult } from "../../src/coordinator/commitOperation.js";
import { decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import type { TypedFact } from "../../src/coordinator/factVocabulary.js";
import type { Activation } from "../../src/coordinator/ports.js";
import { systemClock } from "../../src/kernel/clock.js";
import { idle } from "../../src/runtime/modelFacts.js";
import type { RuntimePorts } from "../../src/runtime/ports.js";
import { RunContext } from "../../src/runtime/runContext.js";

const PARENT = "sthr_parent";
const CHILD = "sthr_call_1";

/** A run on `threadId` whose store accepts every commit and records the operations it got. */
function runOn(threadId: string, first: TypedFact): { run: RunContext; ops: CommitOperation[] } {
  const ops: CommitOperation[] = [];
  const ports = {
    clock: systemClock,
    log: { warn: () => {}, info: () => {}, error: () => {}, debug: () => {} },
    commit: async (op: CommitOperation): Promise<CommitResult> => {
      ops.push(op);
      return {
        ok: true,
        duplicate: false,
        receipt: { versionAfter: op.expectedVersion + op.facts.length, committedAt: 1 },
      } as CommitResult;
    },
  } as unknown as RuntimePorts;
  const activation = {
    runId: "run_1",
    threadId,
    owner: "worker_1",
    epoch: 1,
    agent: { definition: { name: "researcher" } },
  } as unknown as Activation;
  const run = new RunContext(activation, ports, new AbortController().signal);
  run.receive([{ ...encodeFact(first), sessionId: "sesn_1", threadId, seq: 1, createdAt: 1 }]);
  return { run, ops };
}

const task: TypedFact = {
  id: "sevt_task",
  kind: "thread_message_received",
  fromThread: PARENT,
  fromAgentName: null,
  content: [{ type: "text", text: "find A" }],
};

describe("a child thread's turn that ends without its model's answer", () => {
  it("still answers its parent: an error result naming why, and its idle status", async () => {
    const { run, ops } = runOn(CHILD, task);
    expect(await run.commit([idle(1, { kind: "budget_reached" })], "done")).toBe("ok");
    const op = ops[0];
    expect(op?.answer?.parentThreadId).toBe(PARENT);
    const answer = (op?.answer?.facts ?? []).map(decodeFact);
    expect(answer.find((f) => f.kind === "thread_status")).toMatchObject({
      thread: CHILD,
      transition: { to: "idle", reason: { kind: "budget_reached" } },
    });
    const result = answer.find((f) => f.kind === "tool_result");
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result)).toContain("budget is reached");
    // The child's own history says what it sent.
    expect(op?.facts.map(decodeFact).map((f) => f.kind)).toEqual(["status_idle", "thread_message_sent"]);
  });

  it("leaves a primary thread's ending as it was", async () => {
    const { run, ops } = runOn("sthr_primary", {
      id: "sevt_u",
      kind: "user_message",
      content: [{ type: "text", text: "hi" }],
    });
    await run.commit([idle(1, { kind: "retries_exhausted" })], "done");
    expect(ops[0]?.answer).toBeUndefined();
    expect(ops[0]?.facts).toHaveLength(1);
  });
});
