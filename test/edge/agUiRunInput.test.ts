import { describe, expect, it } from "vitest";
import { parseRunInput, RUN_INPUT_BOUNDS } from "../../src/edge/ag-ui/runInput.js";
import { AwakenError } from "../../src/kernel/errors.js";

const base = { threadId: "thread-1", runId: "run-1", messages: [] };

function rejection(body: unknown): string {
  try {
    parseRunInput(body);
  } catch (error) {
    expect(error).toBeInstanceOf(AwakenError);
    expect((error as AwakenError).category).toBe("invalid");
    return (error as AwakenError).message;
  }
  throw new Error("expected a 400");
}

describe("AG-UI RunAgentInput parsing", () => {
  it("takes what HttpAgent sends, filling the protocol's defaults", () => {
    const input = parseRunInput({ ...base, protocolVersion: "1.0", state: {}, forwardedProps: {} });
    expect(input).toMatchObject({ threadId: "thread-1", runId: "run-1", tools: [], context: [] });
  });

  it("refuses what the protocol's schema refuses, naming the field", () => {
    expect(rejection({ threadId: "t", messages: [] })).toContain("runId");
    expect(rejection({ ...base, messages: [{ id: "m", role: "robot", content: "x" }] })).toContain(
      "messages.0",
    );
    expect(rejection("not an object")).toContain("RunAgentInput");
  });

  it("bounds what names a session and what is counted", () => {
    expect(rejection({ ...base, threadId: "" })).toContain("threadId");
    expect(rejection({ ...base, threadId: "a\u0000b" })).toContain("threadId");
    expect(rejection({ ...base, threadId: "x".repeat(257) })).toContain("threadId");
    expect(rejection({ ...base, runId: "r\u202e" })).toContain("runId");
    const many = Array.from({ length: RUN_INPUT_BOUNDS.tools + 1 }, (_, i) => ({
      name: `t${i}`,
      description: "",
    }));
    expect(rejection({ ...base, tools: many })).toContain("tools");
    expect(rejection({ ...base, messages: [{ id: "", role: "user", content: "x" }] })).toContain(
      "messages.0.id",
    );
  });
});
