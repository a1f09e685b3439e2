/**
 * The delegate's next message, decided from committed facts alone (as stored and read back): which
 * input it carries, its message id (the same after any crash), whether the remote already took it,
 * and which remote task and context it goes to.
 */
import { describe, expect, it } from "vitest";
import { decodeCommitted, encodeFact } from "../../src/coordinator/factCodec.js";
import type { CommittedTypedFact, FactPayload, TypedFact } from "../../src/coordinator/factVocabulary.js";
import { A2A_INPUT_TOOL, delegateTurn, remoteTaskFact } from "../../src/runtime/a2a/delegateFacts.js";

class Thread {
  readonly facts: CommittedTypedFact[] = [];
  private counter = 0;

  add(fact: FactPayload & { id?: string }): string {
    const id = fact.id ?? `sevt_${++this.counter}`;
    const stored = encodeFact({ ...fact, id } as TypedFact);
    this.facts.push(
      decodeCommitted({
        ...stored,
        sessionId: "sesn_1",
        threadId: "sthr_1",
        seq: this.facts.length + 1,
        createdAt: 0,
      }),
    );
    return id;
  }
  user(text: string): string {
    return this.add({ kind: "user_message", content: [{ type: "text", text }] });
  }
  start(): string {
    return this.add({
      kind: "model_request_start",
      provider: "a2a",
      model: "a2a:https://r.example/card.json",
    });
  }
  end(startId: string, isError = false): void {
    this.add({
      kind: "model_request_end",
      startId,
      isError,
      provider: "a2a",
      model: "a2a:https://r.example/card.json",
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      },
    });
  }
  remote(taskId: string, contextId: string, messageId: string): void {
    this.add(remoteTaskFact(`sevt_${++this.counter}`, { taskId, contextId, messageId }));
  }
  turn(): ReturnType<typeof delegateTurn> {
    return delegateTurn(this.facts, "sesn_1");
  }
}

describe("delegateTurn", () => {
  it("a first message opens a new remote context with an id derived from the input it carries", () => {
    const t = new Thread();
    const input = t.user("hello");
    expect(t.turn()).toEqual({
      messageId: `awaken-sesn_1-${input}`,
      parts: [{ kind: "text", text: "hello" }],
      taskId: "",
      contextId: "",
      recorded: null,
      previous: null,
    });
  });

  it("after a crash the same message is found recorded: the remote task is resumed, not sent again", () => {
    const t = new Thread();
    const input = t.user("hello");
    const start = t.start();
    t.remote("sesn_r.sevt_9", "sesn_r", `awaken-sesn_1-${input}`);
    t.end(start, true); // the next owner closed the dead owner's span
    expect(t.turn()?.recorded).toEqual({
      taskId: "sesn_r.sevt_9",
      contextId: "sesn_r",
      messageId: `awaken-sesn_1-${input}`,
    });
  });

  it("a later turn reuses the remote context and names the previous task", () => {
    const t = new Thread();
    const first = t.user("one");
    const start = t.start();
    t.remote("sesn_r.a", "sesn_r", `awaken-sesn_1-${first}`);
    t.add({ kind: "agent_message", content: [{ type: "text", text: "answer" }] });
    t.end(start);
    expect(t.turn()).toBeNull();
    const second = t.user("two");
    expect(t.turn()).toMatchObject({
      messageId: `awaken-sesn_1-${second}`,
      parts: [{ kind: "text", text: "two" }],
      taskId: "",
      contextId: "sesn_r",
      recorded: null,
      previous: { taskId: "sesn_r.a" },
    });
  });

  it("the answer to the remote's question goes to the same task; JSON {approved} becomes a data part", () => {
    const t = new Thread();
    const first = t.user("call a tool");
    const start = t.start();
    t.remote("sesn_r.a", "sesn_r", `awaken-sesn_1-${first}`);
    const call = t.add({
      kind: "tool_call",
      call: {
        id: "sevt_call",
        name: A2A_INPUT_TOOL,
        input: { task_id: "sesn_r.a", context_id: "sesn_r", question: "?" },
        executor: "client",
      },
      id: "sevt_call",
    });
    t.end(start);
    const answer = t.add({
      kind: "tool_result",
      callId: call,
      executor: "client",
      by: "client",
      content: [{ type: "text", text: '{"approved": false, "reason": "no"}' }],
      isError: false,
    });
    expect(t.turn()).toEqual({
      messageId: `awaken-sesn_1-${answer}`,
      parts: [{ kind: "data", value: { approved: false, reason: "no" } }],
      taskId: "sesn_r.a",
      contextId: "sesn_r",
      recorded: null,
      previous: null,
    });
  });

  it("an interrupt counts earlier input as handled", () => {
    const t = new Thread();
    t.user("never mind");
    t.add({ kind: "interrupt" });
    expect(t.turn()).toBeNull();
  });
});
