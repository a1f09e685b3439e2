import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, scrapeMetrics, total } from "../support/metricsScrape.js";
import {
  createSession,
  history,
  isEndTurnIdle,
  MODEL,
  StreamReader,
  userMessage,
  WEATHER_TOOL,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  // Tier "none" lets the built-in bash tool run here without a sandbox binary.
  t = await startTestServer({ workerPollMs: 50, allowWeakerTiers: true });
});
afterAll(async () => {
  await t.close();
});

const scrape = () => scrapeMetrics(t.server.url);

async function bashSession() {
  const agent = await t.client.beta.agents.create({
    name: "hands",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }] as never,
  });
  const environment = await t.client.beta.environments.create({
    name: "hands",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

describe("GET /metrics", () => {
  it("counts model requests, tool calls, commits, settles, streams and HTTP routes, with no id or key", async () => {
    const before = (await scrape()).samples;
    const model = { provider: "offline", model: MODEL };

    // A custom tool: the model asks for it, the run parks awaiting the client's answer.
    const { session: custom } = await createSession(t.client, { tools: [WEATHER_TOOL] });
    const reader = await StreamReader.open(t.client, custom.id);
    await t.client.beta.sessions.events.send(custom.id, {
      events: [userMessage('call get_weather {"city":"Paris"}')],
    });
    await reader.until((e) => e.type === "session.status_idle");
    const streaming = (await scrape()).samples;
    expect(total(streaming, "awaken_event_streams_open")).toBe(
      total(before, "awaken_event_streams_open") + 1,
    );
    await reader.close();

    // A built-in tool the server runs: model → bash → model → end of turn.
    const hands = await bashSession();
    await t.client.beta.sessions.events.send(hands.id, {
      events: [userMessage('call bash {"command":"echo hi"}')],
    });
    await waitForHistory(t.client, hands.id, (h) => h.some(isEndTurnIdle), 15_000);
    await history(t.client, hands.id);

    await eventually(async () => {
      const { samples } = await scrape();
      expect(total(samples, "awaken_event_streams_open")).toBe(total(before, "awaken_event_streams_open"));
      // The event stream (a hijacked reply) is counted once its connection closes.
      const stream = { route: "/v1/sessions/:id/events/stream" };
      expect(total(samples, "awaken_http_requests_total", stream)).toBe(
        total(before, "awaken_http_requests_total", stream) + 1,
      );
    });
    const { text, samples, contentType } = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      total(samples, name, labels) - total(before, name, labels);

    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(moved("awaken_model_requests_total", { ...model, outcome: "ok" })).toBe(3);
    expect(moved("awaken_model_requests_total")).toBe(3);
    expect(moved("awaken_model_request_duration_seconds_count", model)).toBe(3);
    expect(moved("awaken_model_tokens_total", { ...model, kind: "input" })).toBeGreaterThan(0);
    expect(moved("awaken_model_tokens_total", { ...model, kind: "output" })).toBeGreaterThan(0);
    expect(moved("awaken_tool_calls_total", { tool: "custom", outcome: "delegated" })).toBe(1);
    expect(moved("awaken_tool_calls_total", { tool: "bash", outcome: "ok" })).toBe(1);
    expect(moved("awaken_tool_calls_total")).toBe(2);
    expect(moved("awaken_tool_call_duration_seconds_count", { tool: "bash" })).toBe(1);
    expect(moved("awaken_runs_settled_total", { outcome: "awaiting" })).toBe(1);
    expect(moved("awaken_runs_settled_total", { outcome: "done" })).toBe(1);
    expect(moved("awaken_runs_settled_total")).toBe(2);
    // Answer + settle (custom); answer, execution, result, answer + settle (bash). A request's span
    // rides on the commit of its answer, so no commit of its own before the request.
    expect(moved("awaken_commits_total", { outcome: "ok" })).toBeGreaterThanOrEqual(5);
    expect(
      moved("awaken_http_requests_total", {
        route: "/v1/sessions/:id/events",
        method: "POST",
        status: "200",
      }),
    ).toBe(2);
    expect(
      moved("awaken_http_requests_total", { route: "/v1/sessions/:id/events", method: "GET" }),
    ).toBeGreaterThan(0);
    expect(
      moved("awaken_http_requests_total", { route: "/v1/sessions", method: "POST", status: "200" }),
    ).toBe(2);
    expect(
      moved("awaken_http_requests_total", { route: "/v1/sessions/:id/events/stream", status: "200" }),
    ).toBe(1);
    // Process metrics share the server's registry.
    expect(total(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);

    // Labels are route patterns, tool kinds and outcomes: no id, key or URL of a request.
    for (const secret of [custom.id, hands.id, TEST_API_KEY, "sesn_", "Paris"])
      expect(text).not.toContain(secret);
    expect(samples.every((s) => !(s.labels.route ?? "").includes("sesn"))).toBe(true);
  });

  it("an unknown path is counted as unmatched, not by its URL", async () => {
    const before = (await scrape()).samples;
    const response = await fetch(`${t.server.url}/v1/no-such-thing/sesn_secretish`);
    expect(response.status).toBe(404);
    const { text, samples } = await scrape();
    expect(total(samples, "awaken_http_requests_total", { route: "unmatched", status: "404" })).toBe(
      total(before, "awaken_http_requests_total", { route: "unmatched", status: "404" }) + 1,
    );
    expect(text).not.toContain("secretish");
  });
});
