/**
 * `/metrics` says nothing a tenant chose: a model id outside the published catalog is counted as
 * "other" (no tenant's naming reaches the scraper, no tenant grows the series), and an operator
 * can require a bearer token for it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExposition, scrapeMetrics, total } from "../support/metricsScrape.js";
import { isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

async function turnOn(t: TestServer, model: string): Promise<void> {
  const agent = await t.client.beta.agents.create({ name: "labels", model });
  const environment = await t.client.beta.environments.create({ name: "labels" });
  const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
  await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
}

describe("model labels on /metrics", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ workerPollMs: 50 });
  });
  afterAll(async () => {
    await t.close();
  });

  it("counts a model id outside the published catalog as other, and a published one by name", async () => {
    const chosen = `claude-evil-${randomBytes(6).toString("hex")}`;
    const before = (await scrapeMetrics(t.server.url)).samples;
    await turnOn(t, chosen);
    await turnOn(t, MODEL);
    const { text, samples } = await scrapeMetrics(t.server.url);
    const moved = (labels: Record<string, string>) =>
      total(samples, "awaken_model_requests_total", labels) -
      total(before, "awaken_model_requests_total", labels);

    expect(text).not.toContain(chosen);
    expect(text).not.toContain("claude-evil");
    expect(moved({ provider: "offline", model: "other", outcome: "ok" })).toBe(1);
    expect(moved({ provider: "offline", model: MODEL, outcome: "ok" })).toBe(1);
    expect(total(samples, "awaken_model_tokens_total", { model: "other", kind: "output" })).toBeGreaterThan(
      0,
    );
  });
});

describe("AWAKEN_METRICS_TOKEN", () => {
  const TOKEN = `metrics-${randomBytes(12).toString("hex")}`;
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ env: { AWAKEN_METRICS_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("makes /metrics answer 401 without the token and 200 with it", async () => {
    const anonymous = await fetch(`${t.server.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const refusal = await anonymous.text();
    expect(refusal).not.toContain("awaken_");
    expect(refusal).not.toContain(TOKEN);

    const wrong = await fetch(`${t.server.url}/metrics`, {
      headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}x` },
    });
    expect(wrong.status).toBe(401);
    await wrong.text();

    const scraped = await fetch(`${t.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    const samples = parseExposition(await scraped.text());
    expect(total(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);

    // Probes stay open: an orchestrator holds no token.
    expect((await fetch(`${t.server.url}/healthz`)).status).toBe(200);
  });
});
