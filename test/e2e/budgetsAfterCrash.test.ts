import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

// The budget and the cost spent against it are committed facts: a kill -9 mid-request loses neither,
// and the restarted process enforces the budget the client raised just before the crash.

const KEY = "sk-awaken-budget-crash-test";
/** 10,000 input and 2,000 output tokens of claude-sonnet-4-6: exactly 6 US cents at list price. */
const SIX_CENTS = { input_tokens: 10_000, output_tokens: 2_000 };
const budget = (amount: string) => ({
  type: "limit" as const,
  max_list_cost: { amount, currency: "USD" as const },
});

let dataDir: string;
let fake: FakeModelServer;
let running: ServerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-budget-crash-"));
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  running = [];
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { ANTHROPIC_API_KEY: "fake-key", ANTHROPIC_BASE_URL: fake.url },
    args: ["--lease-ms", "5000", "--model-retry-base-ms", "10"],
  });
  running.push(p);
  return p;
}

type Ev = { id: string; type: string; stop_reason?: { type: string } } & Record<string, unknown>;

async function stopReasons(client: Anthropic, sessionId: string): Promise<string[]> {
  const events: Ev[] = [];
  for await (const e of client.beta.sessions.events.list(sessionId)) events.push(e as unknown as Ev);
  return events.filter((e) => e.type === "session.status_idle").map((e) => e.stop_reason?.type ?? "");
}

async function turn(client: Anthropic, sessionId: string, text: string): Promise<string[]> {
  const before = (await stopReasons(client, sessionId)).length;
  await client.beta.sessions.events.send(sessionId, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const reasons = await stopReasons(client, sessionId);
    if (reasons.length > before) return reasons;
    if (Date.now() > deadline) throw new Error(`the turn did not end: ${reasons.join(", ")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("budgets across a crash", () => {
  it("kill -9 mid-request: the restarted server keeps the spent cost and enforces the budget raised before the crash", async () => {
    let server = await start();
    const agent = await server.client.beta.agents.create({ name: "budgeted", model: "claude-sonnet-4-6" });
    const env = await server.client.beta.environments.create({ name: "e" });
    const session = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      budget: budget("7"),
    });
    fake.enqueue({ kind: "text", text: "first", usage: SIX_CENTS });
    expect(await turn(server.client, session.id, "one")).toEqual(["end_turn"]);

    // The second turn's request hangs; the client raises the budget (6 spent, 13 allowed); crash.
    fake.enqueue({ kind: "hang" });
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "two" }] }],
    });
    await fake.waitForRequests(2);
    await server.client.beta.sessions.update(session.id, { budget: budget("13") });
    server.child.kill("SIGKILL");
    await server.exited;

    // The cut-off request is asked again as soon as the server is back, and answered: 12 cents spent.
    fake.enqueue({ kind: "text", text: "second", usage: SIX_CENTS });
    server = await start();
    const deadline = Date.now() + 20_000;
    while ((await stopReasons(server.client, session.id)).length < 2) {
      if (Date.now() > deadline) throw new Error("the resumed turn did not end");
      await new Promise((r) => setTimeout(r, 50));
    }
    // 12 < 13: under the raised budget the next request runs (under the old 7 it could not)…
    fake.enqueue({ kind: "text", text: "third", usage: SIX_CENTS });
    expect(await turn(server.client, session.id, "three")).toEqual(["end_turn", "end_turn", "end_turn"]);
    // …and at 18 the one after is refused before it is sent.
    const requests = fake.requests.length;
    expect(await turn(server.client, session.id, "four")).toEqual([
      "end_turn",
      "end_turn",
      "end_turn",
      "budget_reached",
    ]);
    expect(fake.requests.length).toBe(requests);
    const final = await server.client.beta.sessions.retrieve(session.id);
    expect(final.budget).toEqual(budget("13"));
    expect(final.usage).toMatchObject({ input_tokens: 30_000, list_cost: { amount: "18", currency: "USD" } });
  }, 60_000);
});
