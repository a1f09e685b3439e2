import { describe, expect, it } from "vitest";
import { contextWindowsFromEnv, DEFAULT_CONTEXT_WINDOW } from "../../src/providers/contextWindows.js";
import { createProviderRouter } from "../../src/providers/router.js";
import { estimateRequestTokens } from "../../src/providers/tokenEstimate.js";

describe("context windows", () => {
  it("knows the published families and gives any other model the default", () => {
    const windows = contextWindowsFromEnv({});
    expect(windows("claude-sonnet-4-6")).toBe(200_000);
    expect(windows("gpt-4o-mini")).toBe(128_000);
    expect(windows("gpt-4.1")).toBe(1_047_576);
    expect(windows("offline")).toBe(DEFAULT_CONTEXT_WINDOW);
  });

  it("takes the operator's windows per model id first, through the router too", () => {
    const env = { AWAKEN_CONTEXT_WINDOWS: "claude-sonnet-4-6=5000, offline-small = 2048" };
    const windows = contextWindowsFromEnv(env);
    expect(windows("claude-sonnet-4-6")).toBe(5_000);
    expect(windows("offline-small")).toBe(2_048);
    expect(windows("claude-haiku-4-5")).toBe(200_000);
    expect(createProviderRouter(env).contextWindow("offline-small")).toBe(2_048);
  });

  it("refuses a malformed setting with a message naming the variable", () => {
    for (const raw of ["offline", "offline=abc", "offline=12", "=5000", "a=5000,b"]) {
      expect(() => contextWindowsFromEnv({ AWAKEN_CONTEXT_WINDOWS: raw })).toThrow(/AWAKEN_CONTEXT_WINDOWS/);
    }
  });
});

describe("the token estimate", () => {
  it("is one token per four characters of the system prompt, messages and tools, and 1,600 per image", () => {
    const tokens = estimateRequestTokens({
      system: "abcd", // 4
      messages: [
        { role: "user", content: [{ type: "text", text: "12345678" }] }, // 8
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "t", name: "ls", input: { a: 1 } }], // 2 + 7
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t",
              content: [{ type: "text", text: "xyz" }],
              is_error: false,
            }, // 3
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
          ],
        },
      ],
      tools: [],
    });
    expect(tokens).toBe(Math.ceil((4 + 8 + 2 + 7 + 3) / 4) + 1_600);
  });

  it("counts a character outside ASCII as a token of its own", () => {
    const request = (text: string) => ({
      system: null,
      messages: [{ role: "user" as const, content: [{ type: "text" as const, text }] }],
      tools: [],
    });
    expect(estimateRequestTokens(request("上下文压缩"))).toBe(5);
    expect(estimateRequestTokens(request("abcd上下"))).toBe(3);
  });
});
