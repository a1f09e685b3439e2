import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/console/api/wire.js";
import { transcriptRows } from "../../src/console/projection/transcript.js";
import { ev } from "./events.js";
import { oc, th, wf } from "./multiagentEvents.js";

describe("the transcript projection", () => {
  it("one row per message, in commit order, with its role and text", () => {
    const rows = transcriptRows([ev.user("hi"), ev.running(), ev.agent("hello"), ev.idle("end_turn")]);
    expect(rows.map((row) => row.kind)).toEqual(["message", "status", "message", "status"]);
    expect(rows[0]).toMatchObject({ role: "user", text: "hi" });
    expect(rows[2]).toMatchObject({ role: "agent", text: "hello" });
    expect(rows[3]).toMatchObject({ text: "Idle: end_turn" });
  });

  it("a tool call is one row gathering its confirmation and result by id", () => {
    const use = ev.toolUse("bash", { command: "ls" }, "ask");
    const rows = transcriptRows([use, ev.confirm(use.id, "allow"), ev.toolResult(use.id, "file.txt")]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: "tool",
      name: "bash",
      executor: "server",
      input: { command: "ls" },
      permission: "ask",
      confirmation: { result: "allow", denyMessage: null },
      result: { text: "file.txt", isError: false },
    });
  });

  it("a call the ACP harness ran itself is marked as the harness's, others are not", () => {
    const own = {
      ...ev.toolUse("bash", { command: "ls" }, "allow"),
      awaken_harness: true,
    } as unknown as SessionEvent;
    const rows = transcriptRows([own, ev.toolUse("bash", { command: "ls" })]);
    expect(rows.map((row) => (row.kind === "tool" ? row.harness : null))).toEqual([true, false]);
  });

  it("a denied call keeps the deny message and has no result", () => {
    const use = ev.toolUse("bash", { command: "rm -rf /" }, "ask");
    const [row] = transcriptRows([use, ev.confirm(use.id, "deny", "no")]);
    expect(row).toMatchObject({ confirmation: { result: "deny", denyMessage: "no" }, result: null });
  });

  it("MCP calls name their server, custom tools their executor", () => {
    const mcp = ev.mcpToolUse("github", "list_issues");
    const rows = transcriptRows([mcp, ev.mcpResult(mcp.id, "[]"), ev.customToolUse("get_weather")]);
    expect(rows[0]).toMatchObject({ executor: "mcp", mcpServer: "github", result: { text: "[]" } });
    expect(rows[1]).toMatchObject({ executor: "client", name: "get_weather", permission: null });
  });

  it("a model request is one row with provider, model and token usage from its two spans", () => {
    const start = ev.modelStart();
    const rows = transcriptRows([start, ev.modelEnd(start.id)]);
    expect(rows).toEqual([
      expect.objectContaining({
        kind: "model",
        provider: "anthropic",
        model: "claude-sonnet-4-6",
        ended: { isError: false, inputTokens: 12, outputTokens: 34 },
      }),
    ]);
  });

  it("an error row carries its type, message and retry status", () => {
    const [row] = transcriptRows([ev.error("boom", "exhausted")]);
    expect(row).toMatchObject({
      kind: "error",
      errorType: "model_request_failed_error",
      message: "boom",
      retryStatus: "exhausted",
    });
  });

  it("a context compaction is a status row", () => {
    const compacted: SessionEvent = {
      id: "sevt_compacted",
      type: "agent.thread_context_compacted",
      processed_at: "2026-01-01T00:00:00Z",
    };
    expect(transcriptRows([compacted])).toEqual([
      {
        kind: "status",
        id: "sevt_compacted",
        at: "2026-01-01T00:00:00Z",
        text: "Context compacted: older turns summarized",
      },
    ]);
  });

  it("a result whose call is not in view still shows, as its own row", () => {
    const rows = transcriptRows([ev.toolResult("sevt_elsewhere", "late")]);
    expect(rows).toEqual([expect.objectContaining({ kind: "other", type: "agent.tool_result" })]);
  });

  it("projects 1 000 events in linear passes", () => {
    const events = [];
    for (let i = 0; i < 250; i++) {
      const use = ev.toolUse("bash", { i });
      events.push(ev.user(`m${i}`), ev.agent(`a${i}`), use, ev.toolResult(use.id, `r${i}`));
    }
    const rows = transcriptRows(events);
    expect(rows).toHaveLength(750);
    expect(rows.at(-1)).toMatchObject({ kind: "tool", result: { text: "r249" } });
  });
  it("messages between threads are rows naming the other thread's agent; thread statuses are status rows", () => {
    const sent: SessionEvent = {
      id: "sevt_sent",
      type: "agent.thread_message_sent",
      to_session_thread_id: "sthr_c",
      to_agent_name: "researcher",
      content: [{ type: "text", text: "find A" }],
      processed_at: "2026-01-01T00:00:00Z",
    };
    const received: SessionEvent = {
      id: "sevt_received",
      type: "agent.thread_message_received",
      from_session_thread_id: "sthr_p",
      content: [{ type: "text", text: "find A" }],
      processed_at: "2026-01-01T00:00:01Z",
    };
    const rows = transcriptRows([
      th.created("sthr_c", "researcher"),
      sent,
      th.idle("sthr_c", "researcher"),
      received,
    ]);
    expect(rows.map((row) => (row.kind === "status" ? row.text : row.kind))).toEqual([
      "Thread created: researcher",
      "thread_message",
      "Thread researcher idle",
      "thread_message",
    ]);
    expect(rows[1]).toMatchObject({
      direction: "sent",
      peerThread: "sthr_c",
      peerName: "researcher",
      text: "find A",
    });
    // A message whose event does not name the other agent names its thread (the page may know its agent).
    expect(rows[3]).toMatchObject({
      direction: "received",
      peerThread: "sthr_p",
      peerName: null,
      text: "find A",
    });
  });
  it("an outcome's definition, each evaluation's start and its verdict are status rows; heartbeats are not rows", () => {
    const start = oc.start("outc_1", 0);
    const rows = transcriptRows([
      oc.define("outc_1", "write the report"),
      start,
      oc.ongoing("outc_1", 0),
      oc.end("outc_1", start.id, 0, "needs_revision", "missing totals"),
    ]);
    expect(rows.map((row) => (row.kind === "status" ? row.text : row.kind))).toEqual([
      "Outcome defined: write the report",
      "Grader evaluating iteration 0",
      "Verdict on iteration 0: needs revision",
    ]);
  });
  it("a workflow run's creation, statuses and phases are status rows named as its creation names them", () => {
    const start = wf.phaseStarted("wfr_1", "ph_plan");
    const rows = transcriptRows([
      wf.created("wfr_1", "release", [{ id: "ph_plan", name: "plan" }]),
      wf.running("wfr_1"),
      start,
      wf.phaseEnded("wfr_1", "ph_plan", start.id),
      wf.error("wfr_1", "step threw"),
      wf.ended("wfr_1", { type: "completed" }),
    ]);
    expect(rows.map((row) => (row.kind === "status" ? row.text : row.kind))).toEqual([
      "Workflow run created: release",
      "Workflow run release running",
      "Phase plan started",
      "Phase plan ended",
      "error",
      "Workflow run release ended",
    ]);
  });
});
