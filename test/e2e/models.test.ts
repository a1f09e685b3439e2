/**
 * `models.list` / `models.retrieve` through the official SDK: with no provider key every id is
 * answered offline and says so; with keys, the fake Anthropic and OpenAI servers' own lists (read
 * once, paged by the SDK), each model with the provider a turn naming it goes to; a provider whose
 * list fails is a retryable 503 naming it, never a list silently missing it.
 */
import { APIError, NotFoundError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startFakeOpenAI } from "../support/fakeOpenAIServer.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const PROVIDER_KEY = "sk-provider-secret-models-test";

describe("models without a provider key", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("lists the built-in offline model; any id retrieves as answered offline", async () => {
    const page = await t.client.models.list();
    expect(page.data.map((m) => [m.id, (m as unknown as { provider: string }).provider])).toEqual([
      ["offline", "offline"],
    ]);
    const claude = await t.client.models.retrieve("claude-sonnet-4-6");
    expect(claude).toMatchObject({
      type: "model",
      id: "claude-sonnet-4-6",
      provider: "offline",
      answered_offline: true,
    });
    expect(Date.parse(claude.created_at)).not.toBeNaN();
    // A remote A2A agent as the Brain is its own route; an invalid a2a: id is no model at all.
    expect(await t.client.models.retrieve("a2a:https://agents.example.com/card.json")).toMatchObject({
      provider: "a2a",
      answered_offline: false,
      display_name: "Remote A2A agent (agents.example.com)",
    });
    await expect(t.client.models.retrieve("a2a:not a url")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("models from the configured providers", () => {
  let anthropic: FakeModelServer;
  let openai: FakeModelServer;
  let t: TestServer;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    openai = await startFakeOpenAI();
    anthropic.setModels(["claude-opus-5", "claude-sonnet-4-6", "claude-haiku-4-5"]);
    openai.setModels(["gpt-5.1", "text-embedding-3-large", "o4-mini", "whisper-1"]);
    t = await startTestServer({
      env: {
        ANTHROPIC_API_KEY: PROVIDER_KEY,
        ANTHROPIC_BASE_URL: anthropic.url,
        OPENAI_API_KEY: PROVIDER_KEY,
        OPENAI_BASE_URL: openai.url,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await anthropic?.close();
    await openai?.close();
  });

  it("lists each provider's models (OpenAI's chat families only), then offline, paged by the SDK", async () => {
    const seen: Array<[string, string]> = [];
    for await (const model of t.client.models.list({ limit: 2 })) {
      seen.push([model.id, (model as unknown as { provider: string }).provider]);
    }
    expect(seen).toEqual([
      ["claude-opus-5", "anthropic"],
      ["claude-sonnet-4-6", "anthropic"],
      ["claude-haiku-4-5", "anthropic"],
      ["gpt-5.1", "openai"],
      ["o4-mini", "openai"],
      ["offline", "offline"],
    ]);
    const backwards = await t.client.models.list({ before_id: "gpt-5.1", limit: 2 });
    expect(backwards.data.map((m) => m.id)).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"]);
    expect(backwards.has_more).toBe(true);
    // Read once per provider and reused: the pages above cost no more upstream reads.
    expect(anthropic.modelListReads()).toBe(1);
    expect(openai.modelListReads()).toBe(1);
    // The provider's request carried its key; nothing this server answers does.
    const raw = await fetch(`${t.server.url}/v1/models?limit=1000`, {
      headers: { "x-api-key": TEST_API_KEY },
    });
    expect(await raw.text()).not.toContain(PROVIDER_KEY);
  });

  it("retrieve says which provider answers an id; an id its configured provider lacks is a 404", async () => {
    expect(await t.client.models.retrieve("claude-sonnet-4-6")).toMatchObject({
      id: "claude-sonnet-4-6",
      display_name: "Fake claude-sonnet-4-6",
      max_input_tokens: 200_000,
      provider: "anthropic",
      answered_offline: false,
    });
    expect(await t.client.models.retrieve("o4-mini")).toMatchObject({ provider: "openai" });
    expect(await t.client.models.retrieve("offline-echo")).toMatchObject({ provider: "offline" });
    const missing = await t.client.models.retrieve("claude-nonexistent-1").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toMatch(/claude-nonexistent-1.*GET \/v1\/models/);
  });

  it("refuses a bad query with a 400 naming the parameter", async () => {
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["after_id=a&before_id=b", "after_id or before_id"],
      ["after_id=not-a-model", "not-a-model"],
      ["order=desc", "order"],
    ]) {
      const response = await fetch(`${t.server.url}/v1/models?${query}`, {
        headers: { "x-api-key": TEST_API_KEY },
      });
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message, query).toContain(
        field,
      );
    }
    expect((await fetch(`${t.server.url}/v1/models`)).status).toBe(401);
  });
});

describe("a provider whose model list fails", () => {
  let anthropic: FakeModelServer;
  let t: TestServer;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setModels({ status: 500 });
    t = await startTestServer({
      env: { ANTHROPIC_API_KEY: PROVIDER_KEY, ANTHROPIC_BASE_URL: anthropic.url },
    });
  });
  afterAll(async () => {
    await t?.close();
    await anthropic?.close();
  });

  it("is a 503 naming the provider (not its answer or key); the failure is not kept", async () => {
    const failed = await t.client.models.list().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(APIError);
    expect((failed as APIError).status).toBe(503);
    expect((failed as APIError).message).toMatch(
      /anthropic provider's model list could not be read \(HTTP 500\)/,
    );
    expect((failed as APIError).message).not.toContain(PROVIDER_KEY);
    expect((failed as APIError).message).not.toContain("fake failure");
    anthropic.setModels(["claude-sonnet-4-6"]);
    const page = await t.client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(["claude-sonnet-4-6", "offline"]);
  });
});
