/**
 * MCP calls in the runtime's pure parts: `nextStep` treats `agent.mcp_tool_use` like a
 * server-run built-in call (intent attempts, confirmation, result), the conversation closes it with
 * its `agent.mcp_tool_result`, and the MCP holder never asks custody for a credential once the run's
 * claim is lost.
 */
import { describe, expect, it, vi } from "vitest";
import { decodeCommitted } from "../../src/coordinator/factCodec.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import { TOOL_AWAITS } from "../../src/coordinator/facts.js";
import type { CommittedTypedFact } from "../../src/coordinator/factVocabulary.js";
import type { JsonObject } from "../../src/kernel/json.js";
import { OutboundConnector } from "../../src/kernel/outboundConnector.js";
import { OutboundPolicy } from "../../src/kernel/outboundPolicy.js";
import { buildConversation } from "../../src/runtime/conversation.js";
import { McpConnectAborted, McpSessions } from "../../src/runtime/mcp/mcpSessions.js";
import { nextStep } from "../../src/runtime/nextStep.js";
import { TOOL_EXECUTION } from "../../src/runtime/toolFacts.js";

function history(...facts: Array<[string, JsonObject, string?]>): CommittedTypedFact[] {
  return stored(...facts).map(decodeCommitted);
}

function stored(...facts: Array<[string, JsonObject, string?]>): CommittedFact[] {
  return facts.map(([type, body, id], index) => ({
    id: id ?? `sevt_${index + 1}`,
    type,
    body,
    sessionId: "sesn_1",
    threadId: "sthr_1",
    seq: index + 1,
    createdAt: 0,
  }));
}

const use: [string, JsonObject, string] = [
  "agent.mcp_tool_use",
  { name: "lookup", mcp_server_name: "docs", input: { q: "x" }, evaluated_permission: "allow" },
  "sevt_use",
];
const start: [string, JsonObject, string] = [
  "span.model_request_start",
  { provider: "fake", model: "m" },
  "sevt_start",
];
const end: [string, JsonObject] = [
  "span.model_request_end",
  { model_request_start_id: "sevt_start", is_error: false },
];
const message: [string, JsonObject] = ["user.message", { content: [{ type: "text", text: "go" }] }];

describe("nextStep with MCP calls", () => {
  it("an allowed MCP call without a result is the server's to run, naming its server", () => {
    expect(nextStep(history(message, start, use, end))).toEqual({
      kind: "run_tool",
      toolUseId: "sevt_use",
      name: "lookup",
      input: { q: "x" },
      attempts: 0,
      mcpServerName: "docs",
    });
  });

  it("an intent without a result is handed back with its attempts", () => {
    const step = nextStep(
      history(message, start, use, end, [TOOL_EXECUTION, { tool_use_id: "sevt_use", attempt: 1 }]),
    );
    expect(step).toMatchObject({ kind: "run_tool", attempts: 1, mcpServerName: "docs" });
  });

  it("a call waiting for a confirmation parks the run; its result lets the model answer", () => {
    const awaits: [string, JsonObject] = [
      TOOL_AWAITS,
      { tool_use_id: "sevt_use", answer: "tool_confirmation", after_allow: "server", mcp: true },
    ];
    expect(nextStep(history(message, start, use, awaits, end))).toEqual({
      kind: "await",
      eventIds: ["sevt_use"],
    });
    const result: [string, JsonObject] = [
      "agent.mcp_tool_result",
      { mcp_tool_use_id: "sevt_use", content: [{ type: "text", text: "ok" }], is_error: false },
    ];
    expect(nextStep(history(message, start, use, end, result))).toEqual({
      kind: "call_model",
      failedAttempts: 0,
    });
  });

  it("the conversation pairs the MCP call with its result", () => {
    const result: [string, JsonObject] = [
      "agent.mcp_tool_result",
      { mcp_tool_use_id: "sevt_use", content: [{ type: "text", text: "ok" }], is_error: false },
    ];
    const conversation = buildConversation(history(message, start, use, end, result));
    expect(conversation.slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "sevt_use", name: "lookup", input: { q: "x" } }],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "sevt_use",
            content: [{ type: "text", text: "ok" }],
            is_error: false,
          },
        ],
      },
    ]);
  });
});

/** The test's MCP URLs are on the loopback, which only an operator's allow-list lets through. */
const loopback = new OutboundConnector({ policy: OutboundPolicy.allowing("127.0.0.1") });

describe("the MCP holder after a lost claim", () => {
  it("does not ask custody for the credential", async () => {
    const controller = new AbortController();
    controller.abort();
    const credential = vi.fn();
    const sessions = new McpSessions(credential, controller.signal, loopback);
    await expect(
      sessions.connect({ name: "docs", type: "url", url: "http://127.0.0.1:9/mcp" }),
    ).rejects.toBeInstanceOf(McpConnectAborted);
    expect(credential).not.toHaveBeenCalled();
  });

  it("zeroes a credential that arrives after the claim was lost, without using it", async () => {
    const controller = new AbortController();
    const token = Buffer.from("secret-token");
    const sessions = new McpSessions(
      async () => {
        controller.abort();
        return { kind: "bearer", token, credentialId: "vcrd_1", revision: 1 };
      },
      controller.signal,
      loopback,
    );
    await expect(
      sessions.connect({ name: "docs", type: "url", url: "http://127.0.0.1:9/mcp" }),
    ).rejects.toBeInstanceOf(McpConnectAborted);
    expect(token.every((byte) => byte === 0)).toBe(true);
  });
});
