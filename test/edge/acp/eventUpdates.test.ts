/** The editor's view of committed session events and of its own prompts. */
import { describe, expect, it } from "vitest";
import { updatesOf } from "../../../src/edge/acp/eventUpdates.js";
import { messageContent } from "../../../src/edge/acp/promptContent.js";
import { checkSessionId } from "../../../src/edge/acp/sessionIds.js";

describe("updatesOf", () => {
  it("messages are chunks of their message, tool uses and results are calls and their updates", () => {
    expect(
      updatesOf({ id: "sevt_1", type: "user.message", content: [{ type: "text", text: "hi" }] }),
    ).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" }, messageId: "sevt_1" },
    ]);
    expect(
      updatesOf({ id: "sevt_2", type: "agent.tool_use", name: "bash", input: { command: "ls  -la\n" } }),
    ).toMatchObject([
      {
        sessionUpdate: "tool_call",
        toolCallId: "sevt_2",
        title: "bash: ls -la",
        kind: "execute",
        status: "pending",
      },
    ]);
    expect(
      updatesOf({
        id: "sevt_3",
        type: "agent.mcp_tool_result",
        mcp_tool_use_id: "sevt_9",
        is_error: true,
        content: [{ type: "text", text: "boom" }],
      }),
    ).toMatchObject([
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "sevt_9",
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: "boom" } }],
      },
    ]);
    expect(updatesOf({ id: "sevt_4", type: "session.status_idle" })).toEqual([]);
    expect(updatesOf({ id: "sevt_5", type: "agent.thinking" })).toEqual([]);
  });
});

describe("messageContent", () => {
  it("passes text on, links and embedded text by their URI; refuses what a message cannot carry", () => {
    expect(
      messageContent([
        { type: "text", text: "look" },
        { type: "resource_link", name: "a.ts", uri: "file:///w/a.ts" },
        { type: "resource", resource: { uri: "file:///w/b.ts", text: "let b = 1;" } },
      ]),
    ).toEqual([
      { type: "text", text: "look" },
      { type: "text", text: "[a.ts](file:///w/a.ts)" },
      { type: "text", text: "file:///w/b.ts\n```\nlet b = 1;\n```" },
    ]);
    expect(() => messageContent([])).toThrow(/empty prompt/);
    expect(() => messageContent([{ type: "audio", data: "AA==", mimeType: "audio/wav" }])).toThrow(/audio/);
    expect(() => messageContent([{ type: "image", data: "AA==", mimeType: "image/tiff" }])).toThrow(
      /image\/tiff/,
    );
  });
});

describe("checkSessionId", () => {
  it("takes only the form of an Awaken session id", () => {
    expect(checkSessionId(`sesn_${"0".repeat(26)}`)).toBe(`sesn_${"0".repeat(26)}`);
    for (const bad of ["", "sesn_", "../sessions", `sesn_${"0".repeat(25)}/`, `SESN_${"0".repeat(26)}`]) {
      expect(() => checkSessionId(bad)).toThrow(/not an Awaken session id/);
    }
  });
});
