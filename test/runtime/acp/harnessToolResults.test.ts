/**
 * Results of the agent's own tools on an ACP harness, read from committed facts: the MCP call that
 * made a call is answered from its committed result, and a result the harness never received (it
 * was gone when the result came) is told in its next prompt, once.
 */
import { describe, expect, it } from "vitest";
import type { CommittedTypedFact, TypedFact } from "../../../src/coordinator/factVocabulary.js";
import { toolResultOf, unheardDecisions, unseenResults } from "../../../src/runtime/acp/harnessFacts.js";

function history(facts: TypedFact[]): CommittedTypedFact[] {
  return facts.map((fact, index) => ({
    ...fact,
    sessionId: "sesn_1",
    threadId: "sthr_1",
    seq: index + 1,
    createdAt: 0,
  }));
}

const start = (id: string): TypedFact => ({
  id,
  kind: "model_request_start",
  provider: "acp",
  model: "acp:fake",
});
const end = (id: string, startId: string): TypedFact => ({
  id,
  kind: "model_request_end",
  startId,
  isError: false,
  provider: "acp",
  model: "acp:fake",
  usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
});
const customCall = (id: string, name: string): TypedFact => ({
  id,
  kind: "tool_call",
  call: { id, name, input: { q: "x" }, executor: "client" },
});
const result = (id: string, callId: string, text: string, isError = false): TypedFact => ({
  id,
  kind: "tool_result",
  callId,
  executor: "client",
  by: "client",
  content: [{ type: "text", text }],
  isError,
});

describe("the agent's tool results on a harness", () => {
  it("answers the MCP call from the committed result, errors included", () => {
    const facts = history([
      start("s1"),
      customCall("c1", "lookup"),
      end("e1", "s1"),
      result("r1", "c1", "no record", true),
    ]);
    expect(toolResultOf(facts, "c1")).toEqual({
      content: [{ type: "text", text: "no record" }],
      isError: true,
    });
    expect(toolResultOf(facts, "c2")).toBeNull();
  });

  it("tells a result that came after the harness's last answered prompt, and only until a prompt answers it", () => {
    const parked = [start("s1"), customCall("c1", "lookup"), end("e1", "s1"), result("r1", "c1", "Paris")];
    expect(unseenResults(history(parked))).toEqual(["(The result of your call of the lookup tool: Paris)"]);
    // The next prompt (started after the result) saw it.
    expect(unseenResults(history([...parked, start("s2"), end("e2", "s2")]))).toEqual([]);
  });

  it("never tells a harness's own calls' results as the agent's tools'", () => {
    const own: TypedFact = {
      id: "h1",
      kind: "tool_call",
      call: {
        id: "h1",
        name: "bash",
        input: {},
        executor: "harness",
        permission: { decision: "allow", evaluation: null },
      },
    };
    const facts = history([
      start("s1"),
      own,
      end("e1", "s1"),
      { ...result("r1", "h1", "ok"), executor: "harness", by: "server" } as TypedFact,
    ]);
    expect(unseenResults(facts)).toEqual([]);
  });
});

describe("decisions no harness heard", () => {
  const asked: TypedFact = {
    id: "h1",
    kind: "tool_call",
    call: {
      id: "h1",
      name: "edit",
      input: {},
      executor: "harness",
      permission: { decision: "ask", evaluation: null },
    },
  };
  const decided = (allowed: boolean, denyMessage: string | null = null): TypedFact => ({
    id: "d1",
    kind: "tool_confirmation",
    callId: "h1",
    allowed,
    denyMessage,
  });

  it("tells an allowed call that did not run, and a denial with its message, once", () => {
    const parked = [start("s1"), asked, end("e1", "s1")];
    expect(unheardDecisions(history([...parked, decided(true)]))).toEqual([
      "(Your edit call was allowed, but you were restarted before it ran, so it did not run. Make it again if it is still needed.)",
    ]);
    expect(unheardDecisions(history([...parked, decided(false, "not that")]))).toEqual([
      "(Your edit call was denied: not that. It did not run.)",
    ]);
    // A prompt that started after the decision heard it.
    expect(unheardDecisions(history([...parked, decided(true), start("s2"), end("e2", "s2")]))).toEqual([]);
  });
});
