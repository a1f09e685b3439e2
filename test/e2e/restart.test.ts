import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const KEY = "sk-awaken-restart-test";
let dataDir: string;
let fake: FakeModelServer;
let running: ServerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-restart-"));
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  running = [];
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(leaseMs = 1_000): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { ANTHROPIC_API_KEY: "fake-key", ANTHROPIC_BASE_URL: fake.url },
    args: ["--lease-ms", String(leaseMs), "--model-retry-base-ms", "10"],
  });
  running.push(p);
  return p;
}

async function history(client: Anthropic, sessionId: string) {
  const events = [];
  for await (const e of client.beta.sessions.events.list(sessionId, { limit: 7 })) events.push(e);
  return events as Array<{ id: string; type: string } & Record<string, unknown>>;
}

async function waitForIdle(client: Anthropic, sessionId: string, stopReason: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await history(client, sessionId);
    const last = events[events.length - 1] as { type: string; stop_reason?: { type: string } } | undefined;
    if (last?.type === "session.status_idle" && last.stop_reason?.type === stopReason) return events;
    if (Date.now() > deadline)
      throw new Error(`no ${stopReason} idle; history: ${events.map((e) => e.type).join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectSoundHistory(events: Array<{ id: string; type: string }>) {
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  // In the database itself: versions 1..N with no gap, no two facts at one version, same order.
  const db = new Database(join(dataDir, "awaken.db"), { readonly: true });
  try {
    const rows = db.prepare("select id, seq from events order by thread_id, seq").all() as Array<{
      id: string;
      seq: number;
    }>;
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(rows.map((r) => r.id)).toEqual(events.map((e) => e.id));
  } finally {
    db.close();
  }
  // Every model request that started also ended exactly once.
  const starts = events.filter((e) => e.type === "span.model_request_start").map((e) => e.id);
  const ends = events
    .filter((e) => e.type === "span.model_request_end")
    .map((e) => (e as unknown as { model_request_start_id: string }).model_request_start_id);
  expect([...ends].sort()).toEqual([...starts].sort());
}

async function setup(client: Anthropic, tools = false) {
  const agent = await client.beta.agents.create({
    name: "restart",
    model: "claude-sonnet-4-6",
    ...(tools
      ? {
          tools: [
            {
              type: "custom" as const,
              name: "lookup",
              description: "look something up",
              input_schema: { type: "object" as const, properties: { q: { type: "string" } } },
            },
          ],
        }
      : {}),
  });
  const env = await client.beta.environments.create({ name: "e" });
  return client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
}

describe("restarts on the same data directory", () => {
  it("SIGTERM stops within 10 s and a restart keeps every committed event with the same ids", async () => {
    let server = await start();
    const session = await setup(server.client);
    fake.enqueue({ kind: "text", text: "first answer" });
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "one" }] }],
    });
    const before = await waitForIdle(server.client, session.id, "end_turn");

    const stoppedAt = Date.now();
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);

    server = await start();
    const after = await history(server.client, session.id);
    expect(after).toEqual(before);
    fake.enqueue({ kind: "text", text: "second answer" });
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "two" }] }],
    });
    const final = await waitForIdle(server.client, session.id, "end_turn");
    expect(final.slice(0, before.length)).toEqual(before);
    expectSoundHistory(final);
  }, 40_000);

  it("kill -9 mid-model-call: the restarted server resumes the run from its last committed fact", async () => {
    // A lease that a loaded machine's renewals keep: with 1 s, a late renew loses the restarted
    // slice's claim and the run is asked a third time. The restart ends the dead process's claim
    // at once whatever the lease (see "with a long lease" below).
    let server = await start(5_000);
    const session = await setup(server.client);
    fake.enqueue({ kind: "hang" });
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "survive this" }] }],
    });
    await fake.waitForRequests(1);
    server.child.kill("SIGKILL");
    await server.exited;

    fake.enqueue({ kind: "text", text: "answered after the crash" });
    server = await start(5_000);
    const events = await waitForIdle(server.client, session.id, "end_turn");
    expectSoundHistory(events);
    expect(events.filter((e) => e.type === "user.message")).toHaveLength(1);
    const messages = events.filter((e) => e.type === "agent.message");
    expect(messages).toHaveLength(1);
    expect(JSON.stringify(messages[0])).toContain("answered after the crash");
    // The crashed request committed nothing (its span rides with its answer); it was asked again
    // once, and only that request is in history, answered.
    expect(events.filter((e) => e.type === "span.model_request_start")).toHaveLength(1);
    expect(events.filter((e) => e.type === "span.model_request_end").map((e) => e.is_error)).toEqual([false]);
    expect(fake.requests).toHaveLength(2);
  }, 40_000);

  it("kill -9 after a tool result was committed, before the next model turn: it finishes without duplicates", async () => {
    let server = await start();
    const session = await setup(server.client, true);
    fake.enqueue({ kind: "tool_use", name: "lookup", input: { q: "x" } });
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "look it up" }] }],
    });
    const awaiting = await waitForIdle(server.client, session.id, "requires_action");
    const toolUse = awaiting.find((e) => e.type === "agent.custom_tool_use");
    expect(toolUse).toBeDefined();

    fake.enqueue({ kind: "hang" });
    await server.client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUse!.id,
          content: [{ type: "text", text: "result 42" }],
        },
      ],
    });
    await fake.waitForRequests(2);
    server.child.kill("SIGKILL");
    await server.exited;

    fake.enqueue({ kind: "text", text: "the answer is 42" });
    server = await start();
    const events = await waitForIdle(server.client, session.id, "end_turn");
    expectSoundHistory(events);
    expect(events.filter((e) => e.type === "agent.custom_tool_use")).toHaveLength(1);
    expect(events.filter((e) => e.type === "user.custom_tool_result")).toHaveLength(1);
    const last = fake.requests[fake.requests.length - 1]!.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(last.messages)).toContain("result 42");
  }, 40_000);

  it("kill -9 with a long lease: the restarted server resumes the run at once, not after the lease", async () => {
    const leaseMs = 60_000;
    let server = await start(leaseMs);
    const session = await setup(server.client);
    fake.enqueue({ kind: "hang" });
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "survive this" }] }],
    });
    await fake.waitForRequests(1);
    server.child.kill("SIGKILL");
    await server.exited;

    fake.enqueue({ kind: "text", text: "answered after the crash" });
    server = await start(leaseMs);
    // The dead process's lease still had ~60 s to run: finishing within half of it proves the
    // restart ended the lease instead of waiting it out.
    const events = await waitForIdle(server.client, session.id, "end_turn", leaseMs / 2);
    expectSoundHistory(events);
    expect(events.filter((e) => e.type === "agent.message")).toHaveLength(1);
    // Through the usual claim path: a new epoch fenced the dead owner out.
    const db = new Database(join(dataDir, "awaken.db"), { readonly: true });
    try {
      expect(db.prepare("select epoch from runs").all()).toEqual([{ epoch: 2 }]);
    } finally {
      db.close();
    }
  }, 60_000);

  it("a second server on the same SQLite file refuses to start while the first runs", async () => {
    const first = await start();
    const second = await startServerProcess({ dataDir, apiKey: KEY }).then(
      (p) => {
        running.push(p);
        return null;
      },
      (error: unknown) => String(error),
    );
    expect(second).toContain("is in use by another awaken process");
    expect(second).toContain("--database-url");
    expect((await first.client.beta.agents.list()).data).toBeDefined();
  }, 30_000);
});
