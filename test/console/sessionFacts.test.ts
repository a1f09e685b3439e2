import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/console/api/wire.js";
import { lineDiff } from "../../src/console/projection/lineDiff.js";
import { firstToolLatency, mcpConnections } from "../../src/console/projection/sessionFacts.js";
import { ev } from "./events.js";

describe("MCP connections", () => {
  it("counts each server's calls and failed calls, lists declared servers never called", () => {
    const ok = ev.mcpToolUse("github", "list_issues");
    const bad = ev.mcpToolUse("github", "create_issue");
    const failed = { ...ev.mcpResult(bad.id, "boom"), is_error: true } as SessionEvent;
    const uses = mcpConnections([ok, ev.mcpResult(ok.id, "[]"), bad, failed], ["github", "linear"]);
    expect(uses).toEqual([
      { server: "github", calls: 2, failedCalls: 1, connectionError: null },
      { server: "linear", calls: 0, failedCalls: 0, connectionError: null },
    ]);
  });

  it("keeps a server's connection error", () => {
    const error = {
      id: "sevt_mcp_err",
      type: "session.error",
      error: {
        type: "mcp_connection_failed_error",
        message: "connect ECONNREFUSED",
        mcp_server_name: "linear",
        retry_status: { type: "exhausted" },
      },
      processed_at: "2026-01-01T00:00:00.000Z",
    } as SessionEvent;
    expect(mcpConnections([error], ["linear"])).toEqual([
      {
        server: "linear",
        calls: 0,
        failedCalls: 0,
        connectionError: "mcp_connection_failed_error: connect ECONNREFUSED",
      },
    ]);
  });
});

describe("first tool latency", () => {
  it("measures the first Hand tool from the run's start and from its use to its result", () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const running = { ...ev.running(), processed_at: at(0) };
    const use = { ...ev.toolUse("bash", {}), processed_at: at(2) } as SessionEvent;
    const result = { ...ev.toolResult(use.id, "ok"), processed_at: at(5) } as SessionEvent;
    expect(firstToolLatency([running, use, result])).toEqual({
      name: "bash",
      fromRunStartMs: 2_000,
      useToResultMs: 3_000,
      approvalWaitMs: null,
    });
  });

  it("counts the wait for a person's approval apart from the tool's own time", () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const running = { ...ev.running(), processed_at: at(0) };
    const use = { ...ev.toolUse("bash", {}), processed_at: at(2) } as SessionEvent;
    const approved = {
      id: "sevt_ok",
      type: "user.tool_confirmation",
      tool_use_id: use.id,
      result: "allow",
      processed_at: at(40),
    } as SessionEvent;
    const result = { ...ev.toolResult(use.id, "ok"), processed_at: at(41) } as SessionEvent;
    expect(firstToolLatency([running, use, approved, result])).toEqual({
      name: "bash",
      fromRunStartMs: 2_000,
      useToResultMs: 1_000,
      approvalWaitMs: 38_000,
    });
  });

  it("is null without a Hand tool", () => {
    expect(firstToolLatency([ev.user("hi"), ev.running(), ev.agent("hello")])).toBeNull();
  });
});

describe("the line diff", () => {
  it("marks removed and added lines around the common ones", () => {
    expect(lineDiff("a\nb\nc", "a\nx\nc")).toEqual([
      { op: "same", text: "a" },
      { op: "removed", text: "b" },
      { op: "added", text: "x" },
      { op: "same", text: "c" },
    ]);
    expect(lineDiff("same", "same")).toEqual([{ op: "same", text: "same" }]);
  });

  it("refuses texts too long to diff readably", () => {
    expect(lineDiff("x\n".repeat(3_000), "y")).toBeNull();
  });
});
