/**
 * The operator reads under /v1/awaken, over real HTTP: a credential's revisions and the custody
 * audit (secret-free, paged newest first, filterable), the worker roster (the in-process worker and
 * the run it holds), and the hint streams (approvals: a hint when an ask appears and when a decision
 * lands; sessions: also when a session is created, finishes a run or is archived). Bad input answers 400 with a readable message, other workspaces' records 404, and each
 * route needs its role.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { OffsetClock } from "../support/offsetClock.js";
import { isActionIdle, isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";
import { plantedSecret } from "../support/vaultServer.js";

let fake: FakeModelServer;
let t: TestServer;
/** The server's clock: a test moves it past the hint streams' rate limit rather than sleeping it out. */
const clock = new OffsetClock();
/** Every response body read in this file: the last test searches them for each planted secret. */
const bodies: string[] = [];
const planted: string[] = [];

beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    clock,
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    workers: 2,
    allowWeakerTiers: true,
    allowPrivateHosts: LOOPBACK,
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

interface Claim {
  run_id: string;
  session_id: string;
  lapsed: boolean;
  epoch: number;
}
interface Worker {
  id: string;
  claims: Claim[];
}
// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field with toMatchObject.
type Json = any;

async function get(path: string, key = TEST_API_KEY): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${t.server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await response.text();
  bodies.push(text);
  return { status: response.status, json: JSON.parse(text) };
}

async function mint(role: string, workspaceId?: string): Promise<string> {
  const response = await fetch(`${t.server.url}/v1/awaken/api_keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ role, ...(workspaceId ? { workspace_id: workspaceId } : {}) }),
  });
  return ((await response.json()) as { key: string }).key;
}

/** A loopback URL nothing listens on: the validation probe opens the credential, then fails to connect. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/mcp`;
}

async function rotatedCredential() {
  const vault = await t.client.beta.vaults.create({ display_name: "custody" });
  const first = plantedSecret("first");
  const url = await closedPortUrl();
  const credential = await t.client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token: first, mcp_server_url: url },
  });
  planted.push(first);
  for (const label of ["second", "third"]) {
    const token = plantedSecret(label);
    planted.push(token);
    await t.client.beta.vaults.credentials.update(credential.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token },
    });
  }
  return { vault, credential };
}

describe("credential revisions and the custody audit", () => {
  it("lists a credential's revisions newest first, paged, with the sealed fields named but never shown", async () => {
    const { vault, credential } = await rotatedCredential();
    const base = `/v1/awaken/vaults/${vault.id}/credentials/${credential.id}/revisions`;
    const all = await get(base);
    expect(all.status).toBe(200);
    expect(all.json.data.map((r: { revision: number }) => r.revision)).toEqual([3, 2, 1]);
    expect(all.json.data[0]).toMatchObject({
      type: "vault_credential_revision",
      credential_id: credential.id,
      auth: { type: "static_bearer" },
      secret_fields: ["token"],
    });
    const page1 = await get(`${base}?limit=2`);
    expect(page1.json.data).toHaveLength(2);
    const page2 = await get(`${base}?limit=2&page=${page1.json.next_page}`);
    expect(page2.json).toMatchObject({ data: [{ revision: 1 }], next_page: null });
  });

  it("records who opened what: a validation probe's open is in the audit, filterable by credential", async () => {
    const { vault, credential } = await rotatedCredential();
    await t.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
    const opens = await get(`/v1/awaken/credential_opens?credential_id=${credential.id}`);
    expect(opens.status).toBe(200);
    expect(opens.json.data).toHaveLength(1);
    expect(opens.json.data[0]).toMatchObject({
      type: "credential_open",
      credential_id: credential.id,
      vault_id: vault.id,
      revision: 3,
      holder: "validation_probe",
      session_id: null,
      run_id: null,
    });
    expect(["opened", "refused"]).toContain(opens.json.data[0].outcome);
    // Newest first across the workspace; a session filter that matches nothing is an empty page.
    await t.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
    const newest = await get("/v1/awaken/credential_opens?limit=1");
    expect(newest.json.data).toHaveLength(1);
    expect(newest.json.next_page).toEqual(expect.any(String));
    const next = await get(`/v1/awaken/credential_opens?limit=1&page=${newest.json.next_page}`);
    expect(Date.parse(next.json.data[0].created_at)).toBeLessThanOrEqual(
      Date.parse(newest.json.data[0].created_at),
    );
    expect(next.json.data[0].id).not.toBe(newest.json.data[0].id);
    expect((await get("/v1/awaken/credential_opens?session_id=sesn_none")).json).toEqual({
      data: [],
      next_page: null,
    });
  });

  it("bad input answers 400 with what to fix, never 500", async () => {
    const cases: Array<[string, RegExp]> = [
      ["/v1/awaken/credential_opens?limit=100000", /limit: expected an integer between 1 and 1000/],
      ["/v1/awaken/credential_opens?limit=-1", /limit/],
      ["/v1/awaken/credential_opens?page=not-a-cursor", /page: not a cursor returned by this list/],
      ["/v1/awaken/credential_opens?credential_id=x'%20or%201=1", /credential_id: expected an id/],
      ["/v1/awaken/credential_opens?bogus=1", /bogus: unknown query parameter/],
      ["/v1/awaken/workers?limit=5", /limit: unknown query parameter/],
    ];
    for (const [path, message] of cases) {
      const { status, json } = await get(path);
      expect(status, path).toBe(400);
      expect(json.error.message, path).toMatch(message);
    }
    const { vault, credential } = await rotatedCredential();
    const revisions = `/v1/awaken/vaults/${vault.id}/credentials/${credential.id}/revisions`;
    const otherList = (await get("/v1/awaken/credential_opens?limit=1")).json.next_page;
    expect((await get(`${revisions}?page=${otherList ?? "eyJsaXN0IjoieCJ9"}`)).status).toBe(400);
    expect((await get(`/v1/awaken/vaults/${vault.id}/credentials/vcrd_nope/revisions`)).status).toBe(404);
    expect((await get(`/v1/awaken/vaults/vlt_nope/credentials/${credential.id}/revisions`)).status).toBe(404);
  });

  it("another workspace sees none of it, and each route needs its role", async () => {
    const { vault, credential } = await rotatedCredential();
    await t.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
    const otherAdmin = await mint("admin", "wrkspc_operator_other");
    const revisions = await get(
      `/v1/awaken/vaults/${vault.id}/credentials/${credential.id}/revisions`,
      otherAdmin,
    );
    expect(revisions.status).toBe(404);
    expect(revisions.json.error.type).toBe("not_found_error");
    expect(
      (await get(`/v1/awaken/credential_opens?credential_id=${credential.id}`, otherAdmin)).json.data,
    ).toEqual([]);
    expect(
      (await get("/v1/awaken/workers", otherAdmin)).json.workers.flatMap((w: Worker) => w.claims),
    ).toEqual([]);

    const builder = await mint("builder");
    for (const path of [
      "/v1/awaken/credential_opens",
      "/v1/awaken/workers",
      `/v1/awaken/vaults/${vault.id}/credentials/${credential.id}/revisions`,
    ]) {
      const { status, json } = await get(path, builder);
      expect(status, path).toBe(403);
      expect(json.error.message).toMatch(/needs an admin key; this key's role is builder/);
    }
  });
});

describe("the worker roster", () => {
  it("shows this replica's in-process worker, its slots, and the run it holds while the run is live", async () => {
    const agent = await t.client.beta.agents.create({ name: "held", model: MODEL });
    const environment = await t.client.beta.environments.create({ name: "held" });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    fake.enqueue({ kind: "hang" });
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage("wait")] });
    let worker: Worker | undefined;
    for (let i = 0; i < 100 && !worker; i++) {
      const roster = (await get("/v1/awaken/workers")).json;
      expect(roster.type).toBe("worker_roster");
      worker = roster.workers.find((w: Worker) => w.claims.some((c) => c.session_id === session.id));
      if (!worker) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(worker).toMatchObject({
      type: "worker",
      kind: "in_process",
      this_replica: true,
      alive: true,
      slots: 2,
      last_seen_at: expect.any(String),
    });
    expect(worker?.id).toMatch(/^local\.[0-9a-f]+$/);
    const claim = worker?.claims.find((c) => c.session_id === session.id);
    expect(claim).toMatchObject({ lapsed: false, epoch: expect.any(Number), run_id: expect.any(String) });
    await t.client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
  });
});

/** Reads a hint stream's hints (`approvals.changed` by default); `after(n)` waits for one past n. */
/** Quiet long enough for a commit's batched lookup and its hint to reach the stream. */
const QUIET_MS = 150;

async function hints(key = TEST_API_KEY, stream: "approvals" | "sessions" = "approvals") {
  const controller = new AbortController();
  const response = await fetch(`${t.server.url}/v1/awaken/${stream}/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let count = 0;
  let lastFrameAt = Date.now();
  const waiters: Array<() => void> = [];
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        bodies.push(frame);
        lastFrameAt = Date.now();
        if (frame.startsWith(`event: ${stream}.changed`)) {
          count += 1;
          for (const wake of waiters.splice(0)) wake();
        }
        cut = buffer.indexOf("\n\n");
      }
    }
  })();
  return {
    count: () => count,
    /**
     * Moves the server's clock past the 1 s rate limit (a held hint goes out at once), then waits
     * until nothing arrived for QUIET_MS: whatever earlier commits had to say has been said.
     */
    async pastRateLimit(): Promise<void> {
      clock.advance(1_200);
      lastFrameAt = Date.now();
      while (Date.now() - lastFrameAt < QUIET_MS)
        await new Promise((resolve) => setTimeout(resolve, QUIET_MS - (Date.now() - lastFrameAt)));
    },
    async after(seen: number, timeoutMs = 5_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (count <= seen) {
        if (Date.now() > deadline) throw new Error(`no ${stream} hint after ${seen} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    close: () => controller.abort(),
  };
}

describe("the approvals hint stream", () => {
  it("hints at once, when an ask appears and when a decision made elsewhere lands; a runtime key may listen", async () => {
    const runtimeKey = await mint("runtime");
    const stream = await hints(runtimeKey);
    try {
      await stream.after(0);
      const agent = await t.client.beta.agents.create({
        name: "asks",
        model: MODEL,
        tools: [
          {
            type: "agent_toolset_20260401",
            configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
          },
        ] as never,
      });
      const environment = await t.client.beta.environments.create({
        name: "asks",
        config: { type: "cloud", sandbox: { tier: "none" } } as never,
      });
      const session = await t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
      });
      fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo hi" } });
      fake.setFallback({ kind: "text", text: "done" });
      const beforeAsk = stream.count();
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
      const events = await waitForHistory(t.client, session.id, (h) => h.some(isActionIdle));
      await stream.after(beforeAsk);
      const useId = events.filter((e) => e.type === "agent.tool_use").at(-1)!.id;
      // Past the rate limit, and every held hint delivered, so the next hint can only be the decision's.
      await stream.pastRateLimit();
      const beforeDecision = stream.count();
      await t.client.beta.sessions.events.send(session.id, {
        events: [{ type: "user.tool_confirmation", tool_use_id: useId, result: "deny" }],
      });
      await stream.after(beforeDecision);
      await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle));
    } finally {
      stream.close();
    }
  });

  it("another workspace's commits do not reach a stream", async () => {
    const otherRuntime = await mint("runtime", "wrkspc_operator_quiet");
    const stream = await hints(otherRuntime);
    try {
      await stream.after(0);
      const agent = await t.client.beta.agents.create({ name: "loud", model: MODEL });
      const environment = await t.client.beta.environments.create({ name: "loud" });
      const session = await t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
      });
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
      await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stream.count()).toBe(1);
    } finally {
      stream.close();
    }
  });
});

describe("the sessions hint stream", () => {
  it("hints at once, when a session is created, when its run ends and when it is archived; a runtime key may listen", async () => {
    const runtimeKey = await mint("runtime");
    const stream = await hints(runtimeKey, "sessions");
    // Each step moves past the rate limit, so the hint after it can only be that step's.
    const settle = () => stream.pastRateLimit();
    try {
      await stream.after(0);
      const agent = await t.client.beta.agents.create({ name: "listed", model: MODEL });
      const environment = await t.client.beta.environments.create({ name: "listed" });
      await settle();
      const beforeCreate = stream.count();
      const session = await t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
      });
      await stream.after(beforeCreate);
      await settle();
      const beforeRun = stream.count();
      fake.setFallback({ kind: "text", text: "done" });
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
      await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle));
      await stream.after(beforeRun);
      await settle();
      const beforeArchive = stream.count();
      await t.client.beta.sessions.archive(session.id);
      await stream.after(beforeArchive);
    } finally {
      stream.close();
    }
  });

  it("another workspace's new sessions and runs do not reach it", async () => {
    const quiet = await mint("runtime", "wrkspc_sessions_quiet");
    const stream = await hints(quiet, "sessions");
    try {
      await stream.after(0);
      const agent = await t.client.beta.agents.create({ name: "elsewhere", model: MODEL });
      const environment = await t.client.beta.environments.create({ name: "elsewhere" });
      const session = await t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
      });
      fake.setFallback({ kind: "text", text: "done" });
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
      await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stream.count()).toBe(1);
    } finally {
      stream.close();
    }
  });

  it("a key allowed some agents hears of their sessions alone; an access token needs read", async () => {
    const mine = await t.client.beta.agents.create({ name: "allowed", model: MODEL });
    const theirs = await t.client.beta.agents.create({ name: "not-allowed", model: MODEL });
    const environment = await t.client.beta.environments.create({ name: "allow-list" });
    const minted = await fetch(`${t.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ role: "runtime", agent_ids: [mine.id] }),
    });
    const allowListed = ((await minted.json()) as { key: string }).key;
    const stream = await hints(allowListed, "sessions");
    try {
      await stream.after(0);
      await stream.pastRateLimit();
      await t.client.beta.sessions.create({ agent: theirs.id, environment_id: environment.id });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(stream.count()).toBe(1);
      await t.client.beta.sessions.create({ agent: mine.id, environment_id: environment.id });
      await stream.after(1);
    } finally {
      stream.close();
    }
    const token = await fetch(`${t.server.url}/v1/awaken/access_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${allowListed}`, "content-type": "application/json" },
      body: JSON.stringify({ operations: ["send"] }),
    });
    const sendOnly = ((await token.json()) as { token: string }).token;
    const refused = await get("/v1/awaken/sessions/stream", sendOnly);
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toMatch(/"read"/);
  });

  it("refuses a query parameter with 400, and a workspace past its open streams with a retryable 503", async () => {
    const bad = await get("/v1/awaken/sessions/stream?since=1");
    expect(bad.status).toBe(400);
    const crowded = await mint("runtime", "wrkspc_sessions_crowded");
    // One key holds a quarter of the workspace's 64 streams at most: three more keys fill the rest.
    const keys = [
      crowded,
      ...(await Promise.all([1, 2, 3].map(() => mint("runtime", "wrkspc_sessions_crowded")))),
    ];
    const open = await Promise.all(
      keys.flatMap((key) => Array.from({ length: 16 }, () => hints(key, "sessions"))),
    );
    try {
      // A fifth key, under its own share, meets the workspace's bound.
      const refused = await get(
        "/v1/awaken/sessions/stream",
        await mint("runtime", "wrkspc_sessions_crowded"),
      );
      expect(refused.status).toBe(503);
      expect(refused.json.error.message).toMatch(/workspace already holds 64 hint streams/);
      // Another workspace is not crowded out.
      const other = await hints(await mint("runtime", "wrkspc_sessions_roomy"), "sessions");
      await other.after(0);
      other.close();
    } finally {
      for (const stream of open) stream.close();
    }
    // Closed streams give their room back (once the server has seen them close).
    const deadline = Date.now() + 5_000;
    for (;;) {
      const controller = new AbortController();
      const response = await fetch(`${t.server.url}/v1/awaken/sessions/stream`, {
        headers: { authorization: `Bearer ${crowded}` },
        signal: controller.signal,
      });
      controller.abort();
      if (response.status === 200) break;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});

describe("secret-free", () => {
  it("no planted secret is in any response these routes gave", () => {
    expect(planted.length).toBeGreaterThan(0);
    const all = bodies.join("\n");
    for (const secret of planted) expect(all).not.toContain(secret);
  });
});
