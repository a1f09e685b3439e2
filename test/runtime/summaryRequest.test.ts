/**
 * The summarization request: the replaced part of the view as a plain transcript under the
 * summarizer's instructions, without tools, fitted to the window it is sent to.
 */
import { describe, expect, it } from "vitest";
import type { ModelMessage } from "../../src/providers/ports.js";
import { estimateRequestTokens } from "../../src/providers/tokenEstimate.js";
import { SUMMARIZER_SYSTEM, summaryRequest, summaryTokens } from "../../src/runtime/summaryRequest.js";

/** The transcript the request sends: its one user message's one text block. */
const transcriptOf = (request: { messages: ModelMessage[] }): string => {
  const block = request.messages[0]?.content[0];
  return block?.type === "text" ? block.text : "";
};

const said = (role: ModelMessage["role"], text: string): ModelMessage => ({
  role,
  content: [{ type: "text", text }],
});

describe("the summarization request", () => {
  it("renders the replaced turns, tool calls and results as a transcript after the previous summary", () => {
    const request = summaryRequest(
      "m",
      "earlier: the user set up a project",
      [
        said("user", "list the files"),
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "t1", name: "glob", input: { pattern: "*" } }],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "text", text: "a.ts" }],
              is_error: true,
            },
          ],
        },
        said("assistant", "there is a.ts"),
      ],
      { window: 200_000, summaryTokens: 2_048 },
    );
    expect(request).toMatchObject({ model: "m", system: SUMMARIZER_SYSTEM, tools: [], maxTokens: 2_048 });
    expect(request.messages).toHaveLength(1);
    const text = request.messages[0]?.content[0];
    expect(text).toEqual({
      type: "text",
      text: [
        "Summary of the conversation before this part:",
        "earlier: the user set up a project",
        "",
        "Transcript:",
        "User: list the files",
        'Assistant called glob: {"pattern":"*"}',
        "Tool result (error): a.ts",
        "Assistant: there is a.ts",
      ].join("\n"),
    });
  });

  it("keeps the newest entries that fit the window and says how many older ones were left out", () => {
    const turns = Array.from({ length: 50 }, (_, i) => said("user", `entry ${i} ${"x".repeat(400)}`));
    const request = summaryRequest("m", null, turns, { window: 3_000, summaryTokens: 256 });
    const text = transcriptOf(request);
    expect(text).toContain("entry 49 ");
    expect(text).not.toContain("entry 0 ");
    expect(text).toMatch(/\[\d+ earlier entries left out\]/);
    expect(estimateRequestTokens(request) + request.maxTokens).toBeLessThanOrEqual(3_000);
  });

  it("clips one long entry instead of dropping it", () => {
    const request = summaryRequest("m", null, [said("user", "y".repeat(10_000))], {
      window: 200_000,
      summaryTokens: 2_048,
    });
    const text = transcriptOf(request);
    expect(text).toContain("…[clipped]");
    expect(text.length).toBeLessThan(4_100);
  });

  it("asks for a quarter of the message room, within 256 and 2,048 tokens", () => {
    expect(summaryTokens(100)).toBe(256);
    expect(summaryTokens(4_000)).toBe(1_000);
    expect(summaryTokens(190_000)).toBe(2_048);
  });
});
