import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createProviderRouter } from "../../src/providers/router.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startFakeOpenAI } from "../support/fakeOpenAIServer.js";

const ANTHROPIC_KEY = "sk-ant-secret-123";
const OPENAI_KEY = "sk-openai-secret-456";

describe("provider router: selection", () => {
  it("with no keys every model family answers offline", () => {
    const router = createProviderRouter({});
    for (const model of ["claude-sonnet-4-6", "gpt-4o-mini", "o3-mini", "offline-echo", "llama-3"]) {
      expect(router.select(model).name).toBe("offline");
    }
  });

  it("claude-* models go to anthropic when ANTHROPIC_API_KEY is set", () => {
    const router = createProviderRouter({ ANTHROPIC_API_KEY: ANTHROPIC_KEY });
    expect(router.select("claude-opus-4-1").name).toBe("anthropic");
    expect(router.select("gpt-4o").name).toBe("offline");
  });

  it("gpt-*, o1*, o3*, o4* and chatgpt-* models go to openai when OPENAI_API_KEY is set", () => {
    const router = createProviderRouter({ OPENAI_API_KEY: OPENAI_KEY });
    for (const model of ["gpt-4o-mini", "o1", "o1-preview", "o3-mini", "o4-mini", "chatgpt-4o-latest"]) {
      expect(router.select(model).name).toBe("openai");
    }
    expect(router.select("claude-sonnet-4-6").name).toBe("offline");
  });

  it("offline-* and unknown models answer offline even when both keys are set", () => {
    const router = createProviderRouter({ ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY });
    expect(router.select("offline-echo").name).toBe("offline");
    expect(router.select("mistral-large").name).toBe("offline");
  });

  it("an empty key counts as unset", () => {
    const router = createProviderRouter({ ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" });
    expect(router.select("claude-sonnet-4-6").name).toBe("offline");
    expect(router.select("gpt-4o").name).toBe("offline");
  });

  it("each provider is built once and reused across selections", () => {
    const router = createProviderRouter({ ANTHROPIC_API_KEY: ANTHROPIC_KEY });
    expect(router.select("claude-a")).toBe(router.select("claude-b"));
    expect(router.select("offline-a")).toBe(router.select("gpt-4o"));
  });
});

describe("provider router: base URLs", () => {
  let anthropic: FakeModelServer;
  let openai: FakeModelServer;

  beforeEach(async () => {
    anthropic = await startFakeAnthropic();
    openai = await startFakeOpenAI();
  });

  afterEach(async () => {
    await anthropic.close();
    await openai.close();
  });

  it("ANTHROPIC_BASE_URL and OPENAI_BASE_URL point the providers at those servers", async () => {
    const router = createProviderRouter({
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: openai.url,
    });
    const options = { signal: new AbortController().signal, onEvent: () => {} };
    const ask = (model: string) => ({
      model,
      system: null,
      messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "ping" }] }],
      tools: [],
      maxTokens: 16,
    });
    const fromClaude = await router.select("claude-sonnet-4-6").complete(ask("claude-sonnet-4-6"), options);
    const fromGpt = await router.select("gpt-4o-mini").complete(ask("gpt-4o-mini"), options);
    expect(fromClaude.content).toEqual([{ type: "text", text: "fake: ping" }]);
    expect(fromGpt.content).toEqual([{ type: "text", text: "fake: ping" }]);
    expect(anthropic.requests).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });
});

describe("provider router: describe()", () => {
  it("names each configured provider with its base URL and model patterns", () => {
    const lines = createProviderRouter({
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      OPENAI_API_KEY: OPENAI_KEY,
    }).describe();
    expect(lines).toContain("anthropic: https://api.anthropic.com (claude-* models)");
    expect(lines.some((line) => line.startsWith("openai: https://api.openai.com/v1 (gpt-*"))).toBe(true);
  });

  it("says which model families answer offline because a key is missing", () => {
    const lines = createProviderRouter({}).describe();
    expect(lines).toContain("offline: claude-* models answer offline because ANTHROPIC_API_KEY is not set");
    expect(lines.some((line) => line.includes("because OPENAI_API_KEY is not set"))).toBe(true);
  });

  it("never contains a key, even one embedded in a base URL", () => {
    const lines = createProviderRouter({
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: "https://user:hunter2@proxy.example.com/anthropic?key=qs-secret",
      OPENAI_API_KEY: OPENAI_KEY,
    }).describe();
    const text = lines.join("\n");
    for (const secret of [ANTHROPIC_KEY, OPENAI_KEY, "hunter2", "qs-secret"])
      expect(text).not.toContain(secret);
    expect(text).toContain("anthropic: https://proxy.example.com/anthropic (claude-* models)");
  });
});
