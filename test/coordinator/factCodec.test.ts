/**
 * The fact codec keeps stored history exactly as it is: decoding then encoding any stored shape the
 * product writes gives the same fact back (same type, same body, same key order), and the typed
 * reading is what each shape means.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCommitted, decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import type { JsonObject } from "../../src/kernel/json.js";
import { storedFact } from "../support/storedFacts.js";

describe("fact codec", () => {
  it("re-encodes every stored shape exactly: same type, body and key order", () => {
    fc.assert(
      fc.property(storedFact, (fact) => {
        const again = encodeFact(decodeFact(fact));
        expect(again).toEqual(fact);
        expect(JSON.stringify(again)).toBe(JSON.stringify(fact));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps a committed fact's place in the thread", () => {
    const committed = {
      id: "sevt_a",
      type: "user.message",
      body: { content: [{ type: "text", text: "hi" }] },
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: 7,
      createdAt: 1234,
    };
    expect(decodeCommitted(committed)).toEqual({
      id: "sevt_a",
      kind: "user_message",
      content: [{ type: "text", text: "hi" }],
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: 7,
      createdAt: 1234,
    });
  });

  it("reads tool calls and results by executor and author", () => {
    const read = (type: string, body: JsonObject) => decodeFact({ id: "sevt_x", type, body });
    expect(
      read("agent.tool_use", { name: "bash", input: {}, evaluated_permission: "ask", evaluation: null }),
    ).toEqual({
      id: "sevt_x",
      kind: "tool_call",
      call: {
        id: "sevt_x",
        name: "bash",
        input: {},
        executor: "server",
        permission: { decision: "ask", evaluation: null },
      },
    });
    expect(read("agent.custom_tool_use", { name: "lookup", input: { q: 1 } })).toMatchObject({
      call: { executor: "client", name: "lookup" },
    });
    expect(read("agent.mcp_tool_use", { name: "search", mcp_server_name: "docs", input: {} })).toMatchObject({
      call: { executor: "mcp", mcpServer: "docs" },
    });
    const results = [
      ["user.custom_tool_result", "custom_tool_use_id", "client", "client"],
      ["user.tool_result", "tool_use_id", "server", "client"],
      ["agent.tool_result", "tool_use_id", "server", "server"],
      ["agent.mcp_tool_result", "mcp_tool_use_id", "mcp", "server"],
    ] as const;
    for (const [type, field, executor, by] of results) {
      expect(read(type, { [field]: "sevt_call", content: [], is_error: true })).toEqual({
        id: "sevt_x",
        kind: "tool_result",
        callId: "sevt_call",
        executor,
        by,
        content: [],
        isError: true,
      });
    }
    expect(read("user.custom_tool_result", { custom_tool_use_id: "sevt_call" })).toMatchObject({
      content: [],
      isError: false,
      unset: ["content", "isError"],
    });
  });

  it("reads the rest of the vocabulary", () => {
    const read = (type: string, body: JsonObject) => decodeFact({ id: "sevt_x", type, body });
    expect(read("user.message", { content: [], awaken_client_message_id: "m1" })).toMatchObject({
      kind: "user_message",
      clientMessageId: "m1",
    });
    expect(
      read("user.tool_confirmation", { tool_use_id: "sevt_c", result: "deny", deny_message: "no" }),
    ).toEqual({
      id: "sevt_x",
      kind: "tool_confirmation",
      callId: "sevt_c",
      allowed: false,
      denyMessage: "no",
    });
    expect(
      read("session.status_idle", { stop_reason: { type: "requires_action", event_ids: ["a", "b"] } }),
    ).toMatchObject({ kind: "status_idle", reason: { kind: "waiting", callIds: ["a", "b"] } });
    expect(read("session.status_idle", { stop_reason: { type: "new_reason" } })).toMatchObject({
      reason: { kind: "other", type: "new_reason" },
    });
    expect(
      read("session.error", {
        error: {
          type: "mcp_connection_failed_error",
          message: "m",
          retry_status: { type: "exhausted" },
          mcp_server_name: "d",
        },
      }),
    ).toMatchObject({
      kind: "error",
      errorType: "mcp_connection_failed_error",
      retryStatus: "exhausted",
      extra: { mcp_server_name: "d" },
    });
    expect(read("awaken.tool_execution", { tool_use_id: "c", attempt: 1 })).toMatchObject({
      kind: "internal",
      type: "awaken.tool_execution",
    });
    expect(read("agent.thinking", {})).toEqual({ id: "sevt_x", kind: "agent_thinking" });
    expect(read("future.created", { content: [] })).toEqual({
      id: "sevt_x",
      kind: "unknown",
      type: "future.created",
      body: { content: [] },
    });
    expect(
      read("workflow_run.phase_ended", {
        workflow_run_id: "wfr_c",
        workflow_run_phase_id: "wfph_c.0",
        phase_started_id: "sevt_p",
      }),
    ).toEqual({
      id: "sevt_x",
      kind: "workflow_run",
      run: "wfr_c",
      change: { type: "phase_ended", phase: "wfph_c.0", startedId: "sevt_p" },
    });
    expect(
      read("workflow_run.error", { workflow_run_id: null, error: { type: "program_error", message: "m" } }),
    ).toEqual({
      id: "sevt_x",
      kind: "workflow_run",
      run: null,
      change: { type: "error", error: { type: "program_error", message: "m" } },
    });
    // A stored type that happens to be an Object.prototype name is still just unknown.
    expect(read("constructor", {})).toMatchObject({ kind: "unknown", type: "constructor" });
  });

  it("reads the threads' facts: a child's creation and status changes, and the messages agents send each other", () => {
    const read = (type: string, body: JsonObject) => decodeFact({ id: "sevt_x", type, body });
    expect(
      read("session.thread_created", {
        session_thread_id: "sthr_c",
        agent_name: "researcher",
        workflow_run_id: null,
      }),
    ).toEqual({
      id: "sevt_x",
      kind: "thread_created",
      thread: "sthr_c",
      agentName: "researcher",
      workflowRun: null,
    });
    expect(read("session.thread_status_running", { session_thread_id: "sthr_c", agent_name: "r" })).toEqual({
      id: "sevt_x",
      kind: "thread_status",
      thread: "sthr_c",
      agentName: "r",
      transition: { to: "running" },
    });
    expect(
      read("session.thread_status_idle", {
        session_thread_id: "sthr_c",
        agent_name: "r",
        stop_reason: { type: "requires_action", event_ids: ["sevt_a"] },
        stop_details: null,
      }),
    ).toMatchObject({ transition: { to: "idle", reason: { kind: "waiting", callIds: ["sevt_a"] } } });
    expect(
      read("session.thread_status_rescheduled", { session_thread_id: "t", agent_name: "r" }),
    ).toMatchObject({
      transition: { to: "rescheduled" },
    });
    expect(
      read("session.thread_status_terminated", { session_thread_id: "t", agent_name: "r" }),
    ).toMatchObject({
      transition: { to: "terminated" },
    });
    const content = [{ type: "text", text: "look this up" }];
    expect(read("agent.thread_message_sent", { content, to_session_thread_id: "sthr_c" })).toEqual({
      id: "sevt_x",
      kind: "thread_message_sent",
      toThread: "sthr_c",
      toAgentName: null,
      content,
    });
    expect(
      read("agent.thread_message_received", {
        content,
        from_session_thread_id: "sthr_p",
        from_agent_name: "lead",
      }),
    ).toEqual({
      id: "sevt_x",
      kind: "thread_message_received",
      fromThread: "sthr_p",
      fromAgentName: "lead",
      content,
    });
  });

  it("refuses to encode a result no stored type can hold", () => {
    expect(() =>
      encodeFact({
        id: "sevt_x",
        kind: "tool_result",
        callId: "c",
        executor: "client",
        by: "server",
        content: [],
        isError: false,
      }),
    ).toThrow(/no stored encoding/);
  });
});
