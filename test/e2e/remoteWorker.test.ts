import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSession,
  isActionIdle,
  isEndTurnIdle,
  StreamReader,
  stopReason,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { leadWithResearcher } from "../support/subagentSetup.js";
import { spawnWorker, startWorker, type WorkerProcess } from "../support/workerProcess.js";

const KEY = "sk-awaken-remote-worker-test";
const TOKEN = "worker-token-0123456789abcdef";
let dataDir: string;
let server: ServerProcess;
let workers: WorkerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-remote-"));
  // No in-process workers: every run below is executed by a separate `awaken worker` process.
  server = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { AWAKEN_WORKER_TOKEN: TOKEN },
    args: ["--workers", "0", "--lease-ms", "1000"],
  });
});
afterEach(async () => {
  for (const p of [...workers, server]) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  workers = [];
  rmSync(dataDir, { recursive: true, force: true });
});

async function worker(env: NodeJS.ProcessEnv = {}, token = TOKEN): Promise<WorkerProcess> {
  const w = await startWorker(server.url, token, env);
  workers.push(w);
  return w;
}

/** No fact twice, every model request that started ended exactly once. */
function expectSoundHistory(events: WireEvent[]) {
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  const starts = events.filter((e) => e.type === "span.model_request_start").map((e) => e.id);
  const ends = events.filter((e) => e.type === "span.model_request_end").map((e) => e.model_request_start_id);
  expect([...ends].sort()).toEqual([...starts].sort());
}

const workerRoute = (path: string, auth: string) =>
  fetch(`${server.url}/v1/awaken/worker${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
    body: "{}",
  });

describe("remote workers over the worker transport", () => {
  it("two worker processes run a turn and a custom tool round trip", async () => {
    await worker();
    await worker();
    const client = server.client;
    const { session } = await createSession(client, { tools: [WEATHER_TOOL] });

    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello there")] });
    let events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
    expect(JSON.stringify(events.find((e) => e.type === "agent.message"))).toContain("You said: hello there");

    await client.beta.sessions.events.send(session.id, { events: [userMessage("call get_weather")] });
    events = await waitForHistory(client, session.id, (h) => h.some(isActionIdle), 15_000);
    const toolUse = events.find((e) => e.type === "agent.custom_tool_use");
    expect(stopReason(events.at(-1))?.event_ids).toEqual([toolUse?.id]);
    await client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUse!.id,
          content: [{ type: "text", text: "sunny, 21 C" }],
        },
      ],
    });
    events = await waitForHistory(client, session.id, (h) => h.filter(isEndTurnIdle).length === 2, 15_000);
    const answer = events.filter((e) => e.type === "agent.message").at(-1);
    expect(JSON.stringify(answer)).toContain("Tool result received: sunny, 21 C");
    expectSoundHistory(events);
  }, 60_000);

  it("a subagent spawned through a remote worker runs the roster's pinned agent and answers its parent", async () => {
    await worker();
    const client = server.client;
    const { researcherId, leadId, environmentId } = await leadWithResearcher(
      client,
      "remote-subagents",
      "You research.",
    );
    const session = await client.beta.sessions.create({ agent: leadId, environment_id: environmentId });
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call spawn_agent {"agent_name":"researcher","message":"find A"}')],
    });
    const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 30_000);
    const received = events.find((e) => e.type === "agent.thread_message_received");
    expect(JSON.stringify(received)).toContain("You said: find A");
    const threads = [];
    for await (const thread of client.beta.sessions.threads.list(session.id)) threads.push(thread);
    const child = threads.find((t) => t.parent_thread_id !== null);
    expect(child?.agent).toMatchObject({ id: researcherId, version: 1, system: "You research." });
    expectSoundHistory(events);
  }, 60_000);

  it("a workflow run through a remote worker: its steps (one inline) run as threads, phase after phase", async () => {
    await worker();
    const client = server.client;
    const { researcherId, environmentId } = await leadWithResearcher(client, "remote-workflows");
    // Workflows have their own list of predefined agents (the subagents' is not theirs).
    const lead = await client.beta.agents.create({
      name: "planner",
      model: "claude-sonnet-4-6",
      multiagent: {
        type: "multiagent_20261001",
        workflows: { type: "enabled", predefined_agents: [researcherId] },
      },
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environmentId });
    const plan = {
      name: "remote",
      phases: [
        { name: "look", steps: [{ agent_name: "researcher", message: "find A" }] },
        {
          name: "judge",
          steps: [{ agent: { name: "critic", system: "You critique." }, message: "doubt it" }],
        },
      ],
    };
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage(`call start_workflow ${JSON.stringify(plan)}`)],
    });
    const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 30_000);
    expect(events.find((e) => e.type === "workflow_run.status_ended")).toMatchObject({
      result: { type: "completed" },
    });
    const threads = [];
    for await (const thread of client.beta.sessions.threads.list(session.id)) threads.push(thread);
    // The coordinator derived each step's agent: the pinned researcher, and the lead's own definition inline.
    expect(threads.map((th) => th.agent).slice(1)).toEqual([
      expect.objectContaining({ type: "agent", id: researcherId, version: 1 }),
      expect.objectContaining({ type: "inline", name: "critic", system: "You critique." }),
    ]);
    expect(JSON.stringify(events.find((e) => e.type === "agent.tool_result"))).toContain(
      "You said: doubt it",
    );
    expectSoundHistory(events);
  }, 60_000);

  it("/readyz counts the remote workers heard from beside the in-process ones (none here)", async () => {
    const readyz = async () => (await (await fetch(`${server.url}/readyz`)).json()) as { checks: object };
    expect((await readyz()).checks).toMatchObject({ workers: "none", remote_workers: 0 });
    await worker();
    await worker();
    // A worker is heard from at its claim polls, which begin once it has started.
    const deadline = Date.now() + 10_000;
    let checks = (await readyz()).checks;
    while ((checks as { remote_workers?: number }).remote_workers !== 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      checks = (await readyz()).checks;
    }
    expect(checks).toMatchObject({ workers: "none", remote_workers: 2 });
  });

  it("kill -9 a worker mid-model-call: another worker resumes after the lease lapses, no duplicates", async () => {
    // Slow deltas keep the first worker's model call in flight long enough to kill it there.
    const doomed = await worker({ AWAKEN_OFFLINE_DELAY_MS: "2000" });
    const client = server.client;
    const { session } = await createSession(client);
    const reader = await StreamReader.open(client, session.id, { event_deltas: ["agent.message"] });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("survive the crash")] });
    // Mid-call: the answer previews (nothing of a request is committed before its answer).
    const preview = await reader.until((e) => e.type === "event_start", { timeoutMs: 15_000 });
    await reader.close();
    const previewedId = (preview.event as { id: string }).id;
    doomed.child.kill("SIGKILL");
    await doomed.exited;

    await worker();
    const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 20_000);
    expectSoundHistory(events);
    expect(events.filter((e) => e.type === "user.message")).toHaveLength(1);
    const messages = events.filter((e) => e.type === "agent.message");
    expect(messages).toHaveLength(1);
    expect(JSON.stringify(messages[0])).toContain("You said: survive the crash");
    // The crashed request left nothing (its previewed message never committed); asked again once.
    expect(events.some((e) => e.id === previewedId)).toBe(false);
    expect(events.filter((e) => e.type === "span.model_request_start")).toHaveLength(1);
    expect(events.filter((e) => e.type === "span.model_request_end").map((e) => e.is_error)).toEqual([false]);
  }, 60_000);

  it("a wrong token or an API key gets 401, and a worker with a wrong token refuses to start", async () => {
    expect((await workerRoute("/config", "wrong-token-0123456789")).status).toBe(401);
    expect((await workerRoute("/claim", KEY)).status).toBe(401);
    const ok = await workerRoute("/config", TOKEN);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ leaseMs: 1000 });

    const w = spawnWorker(["--coordinator-url", server.url], {
      AWAKEN_WORKER_TOKEN: "wrong-token-0123456789",
    });
    workers.push(w);
    expect(await w.exited).not.toBe(0);
    expect(w.stderr()).toMatch(/rejected the worker token \(401\)/);
  }, 30_000);

  it("SIGTERM stops an idle worker cleanly", async () => {
    const w = await worker();
    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(0);
  }, 30_000);
});

describe("awaken worker refuses forbidden or missing configuration", () => {
  const refuse = async (args: string[], env: NodeJS.ProcessEnv) => {
    const w = spawnWorker(args, env);
    const code = await w.exited;
    expect(code).not.toBe(0);
    return w.stderr();
  };

  it("refuses a database URL, from the flag or the environment", async () => {
    const flag = await refuse(["--coordinator-url", "http://127.0.0.1:1", "--database-url", "x"], {
      AWAKEN_WORKER_TOKEN: TOKEN,
    });
    expect(flag).toMatch(/refuses to start: a worker never opens the database, but --database-url is set/);
    const env = await refuse(["--coordinator-url", "http://127.0.0.1:1"], {
      AWAKEN_WORKER_TOKEN: TOKEN,
      DATABASE_URL: "postgres://x",
    });
    expect(env).toMatch(/DATABASE_URL is set/);
  });

  it("refuses a missing token or coordinator URL", async () => {
    expect(await refuse(["--coordinator-url", "http://127.0.0.1:1"], {})).toMatch(
      /missing AWAKEN_WORKER_TOKEN/,
    );
    expect(await refuse([], { AWAKEN_WORKER_TOKEN: TOKEN })).toMatch(/missing --coordinator-url/);
  });
});
