import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { history, isEndTurnIdle, MODEL, sleep, userMessage } from "../support/sdkHelpers.js";
import { createEnvironmentKey } from "../support/selfHosted.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// The SDK's own self-hosted runner (`client.beta.environments.work.worker()`, lib/environments) against
// Awaken: poll → ack → heartbeat → session retrieve with the sessions token → SessionToolRunner →
// force-stop; and the same worker running a session's built-in tool calls with the SDK's own toolset.

let t: TestServer;
let workdir: string;
beforeAll(async () => {
  t = await startTestServer({ workers: 1 });
  workdir = mkdtempSync(join(tmpdir(), "awaken-env-worker-"));
});
afterAll(async () => {
  await t.close();
  rmSync(workdir, { recursive: true, force: true });
});

interface SeenRequest {
  method: string;
  path: string;
  credential: "api key" | "environment key" | "sessions token" | "other";
  status?: number;
}

/** A fetch that records who called what, so the test can see which credential each call used. */
function recordingFetch(seen: SeenRequest[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const auth = request.headers.get("authorization") ?? "";
    const token = auth.replace(/^Bearer\s+/i, "");
    const entry: SeenRequest = {
      method: request.method,
      path: new URL(request.url).pathname,
      credential: token.startsWith("sk-awaken-sess-")
        ? "sessions token"
        : token.startsWith("sk-awaken-env-")
          ? "environment key"
          : token === TEST_API_KEY
            ? "api key"
            : "other",
    };
    seen.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    return response;
  };
}

describe("the SDK's EnvironmentWorker against Awaken", () => {
  it("claims a session's work item, heartbeats, reads the session with its sessions token, runs the tool runner and force-stops", async () => {
    const env = await t.client.beta.environments.create({ name: "worker", config: { type: "self_hosted" } });
    const key = (await createEnvironmentKey(t.client, env.id, "sdk worker")).key as string;
    const agent = await t.client.beta.agents.create({ name: "Self-hosted", model: MODEL });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });

    const seen: SeenRequest[] = [];
    const workerClient = new Anthropic({
      baseURL: t.server.url,
      apiKey: TEST_API_KEY,
      fetch: recordingFetch(seen),
      logLevel: "off",
    });
    const stop = new AbortController();
    const running = workerClient.beta.environments.work
      .worker({
        environmentId: env.id,
        environmentKey: key,
        workdir,
        maxIdleMs: 300,
        workerId: "sdk-worker-1",
      })
      .run(stop.signal);

    try {
      const item = await waitFor(async () => {
        for await (const w of t.client.beta.environments.work.list(
          env.id,
          {},
          { headers: { authorization: `Bearer ${key}` } },
        )) {
          if (w.data.id === session.id && w.state === "active") return w;
        }
        return null;
      });
      expect(item.started_at).not.toBeNull();
      expect((await t.client.beta.environments.work.stats(env.id)).workers_polling).toBe(1);

      // A turn while the worker serves the session: the runner sees it end and, idle, lets go.
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello from the test")] });
      const stopped = await waitFor(async () => {
        const w = await t.client.beta.environments.work.retrieve(item.id, { environment_id: env.id });
        return w.state === "stopped" ? w : null;
      });
      expect(stopped.stopped_at).not.toBeNull();
      expect((await history(t.client, session.id)).some(isEndTurnIdle)).toBe(true);
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }

    const calls = (credential: SeenRequest["credential"]) =>
      seen.filter((r) => r.credential === credential).map((r) => `${r.method} ${r.path}`);
    const workPath = `/v1/environments/${env.id}/work`;
    // Polling and acknowledging use the environment key; everything about the item, its token.
    expect(calls("environment key")).toContain(`GET ${workPath}/poll`);
    expect(calls("environment key").some((c) => /\/ack$/.test(c))).toBe(true);
    const byToken = calls("sessions token");
    expect(byToken.some((c) => /^POST .*\/heartbeat$/.test(c))).toBe(true);
    expect(byToken).toContain(`GET /v1/sessions/${session.id}`);
    expect(byToken).toContain(`GET /v1/sessions/${session.id}/events/stream`);
    expect(byToken).toContain(`GET /v1/sessions/${session.id}/events`);
    expect(byToken.some((c) => /^POST .*\/stop$/.test(c))).toBe(true);
    // Every call the worker made with the token succeeded (a 4xx would end its runner early).
    expect(seen.filter((r) => r.credential === "sessions token" && (r.status ?? 0) >= 400)).toEqual([]);
    // The parent client's API key never went on the wire.
    expect(calls("api key")).toEqual([]);
  });
});

describe("the SDK's EnvironmentWorker runs a self-hosted session's built-in tools", () => {
  it("bash, write, read, edit and grep calls run in the worker's workdir and their results resume the run", async () => {
    const { session, seen, stop, running } = await toolsetSessionWithWorker("tools", 2_000);

    // The offline model calls the tool each message names; each call parks the run until the
    // worker's user.tool_result arrives.
    const steps: Array<[string, Record<string, unknown>]> = [
      ["bash", { command: "mkdir -p src && echo from-bash > src/made.txt" }],
      ["write", { file_path: "src/notes.md", content: "hello world\n" }],
      ["edit", { file_path: "src/notes.md", old_string: "world", new_string: "awaken" }],
      ["read", { file_path: "src/notes.md" }],
      ["grep", { pattern: "from-bash" }],
    ];
    try {
      for (const [tool, input] of steps) {
        const before = (await history(t.client, session.id)).filter(isEndTurnIdle).length;
        await t.client.beta.sessions.events.send(session.id, {
          events: [userMessage(`call ${tool} ${JSON.stringify(input)}`)],
        });
        await waitFor(async () => {
          const events = await history(t.client, session.id);
          return events.filter(isEndTurnIdle).length > before ? events : null;
        }, 15_000);
      }
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }

    const events = await history(t.client, session.id);
    const uses = events.filter((e) => e.type === "agent.tool_use");
    const results = events.filter((e) => e.type === "user.tool_result");
    expect(uses.map((e) => e.name)).toEqual(steps.map(([tool]) => tool));
    expect(results.map((e) => e.tool_use_id)).toEqual(uses.map((e) => e.id));
    expect(results.map((e) => e.is_error)).toEqual([false, false, false, false, false]);
    const text = (e: (typeof results)[number]) => JSON.stringify(e.content);
    expect(text(results[3]!)).toContain("hello awaken");
    expect(text(results[4]!)).toContain("made.txt");
    expect(readFileSync(join(workdir, "src/made.txt"), "utf8")).toBe("from-bash\n");
    // Every result was posted with the item's sessions token, and accepted.
    const posts = seen.filter((r) => r.method === "POST" && r.path === `/v1/sessions/${session.id}/events`);
    expect(posts.length).toBeGreaterThanOrEqual(steps.length);
    expect(posts.every((r) => r.credential === "sessions token" && r.status === 200)).toBe(true);
  }, 60_000);
});

describe("the SDK's EnvironmentWorker after its lease is lost", () => {
  it("a result the worker posts after its item was stopped is rejected (412) and changes nothing", async () => {
    const { env, key, session, seen, stop, running } = await toolsetSessionWithWorker("loss", 5_000);
    const marker = join(workdir, "late.txt");
    try {
      await t.client.beta.sessions.events.send(session.id, {
        events: [userMessage('call bash {"command":"touch started.txt; sleep 1.5; echo late > late.txt"}')],
      });
      // The worker holds the item and is running the command...
      const item = await waitFor(async () => {
        if (!existsSync(join(workdir, "started.txt"))) return null;
        for await (const w of t.client.beta.environments.work.list(
          env.id,
          {},
          { headers: { authorization: `Bearer ${key}` } },
        )) {
          if (w.data.id === session.id && w.state === "active") return w;
        }
        return null;
      });
      // ...when the operator stops its item: the lease is gone while the tool still runs.
      await t.client.beta.environments.work.stop(item.id, { environment_id: env.id, force: true });
      await waitFor(async () => (existsSync(marker) ? true : null), 10_000);
      // The late result was posted with the old token and refused inside the append's transaction.
      const late = await waitFor(async () => {
        const posts = seen.filter(
          (r) => r.method === "POST" && r.path === `/v1/sessions/${session.id}/events`,
        );
        return posts.find((r) => r.status !== undefined) ?? null;
      });
      expect(late).toMatchObject({ credential: "sessions token", status: 412 });
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }
    const events = await history(t.client, session.id);
    expect(events.some((e) => e.type === "user.tool_result")).toBe(false);
    expect(events.at(-1)?.type).toBe("session.status_idle");
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
    // The session still owes that result, so its stopped item was replaced by a new one (queued, or
    // already picked up by a worker): the session is never left without a way to be served.
    const items = [];
    for await (const w of t.client.beta.environments.work.list(
      env.id,
      {},
      { headers: { authorization: `Bearer ${key}` } },
    )) {
      if (w.data.id === session.id) items.push(w);
    }
    expect(items).toHaveLength(2);
  }, 30_000);
});

/**
 * A self-hosted environment with a fresh environment key, an agent with the built-in toolset, a
 * session, and the SDK's own worker serving it through a fetch that records every call.
 */
async function toolsetSessionWithWorker(name: string, maxIdleMs: number) {
  const env = await t.client.beta.environments.create({ name, config: { type: "self_hosted" } });
  const key = (await createEnvironmentKey(t.client, env.id, "sdk worker")).key as string;
  const agent = await t.client.beta.agents.create({
    name: `Self-hosted ${name}`,
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }],
  });
  const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
  const seen: SeenRequest[] = [];
  const workerClient = new Anthropic({
    baseURL: t.server.url,
    apiKey: TEST_API_KEY,
    fetch: recordingFetch(seen),
    logLevel: "off",
  });
  const stop = new AbortController();
  const running = workerClient.beta.environments.work
    .worker({ environmentId: env.id, environmentKey: key, workdir, maxIdleMs, workerId: `sdk-${name}` })
    .run(stop.signal);
  return { env, key, session, seen, stop, running };
}

async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(50);
  }
}
