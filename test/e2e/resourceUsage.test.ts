/**
 * What each run of a session saw, read back over real HTTP through the SDK's client on SQLite and
 * on the real PostgreSQL server: a session with a file and a read-write memory store runs turns in
 * the real bwrap tier with a scripted model, and `GET /v1/awaken/sessions/{id}/resource_usage`
 * answers, per run in commit order, the file's digest and mount path, the store and its access,
 * and the memory write-back's outcome. A repository's token never comes back; another
 * workspace's session, a deleted one and a forged cursor are refused.
 *
 * The runs need bubblewrap on the host, as every bwrap test does.
 */
import { createHash } from "node:crypto";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  MEMORY_WRITTEN_BACK_TYPE,
  RESOURCES_REALIZED_TYPE,
} from "../../src/edge/managed-agents/resourceUsageDto.js";
import { MEMORY_WRITTEN_BACK, RESOURCES_REALIZED } from "../../src/runtime/toolFacts.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  BAD_REQUEST,
  expectApiError,
  history,
  MODEL,
  NOT_FOUND,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

interface RunUsage {
  type: string;
  run_id: string | null;
  realized_at: string;
  mode: string;
  resources: Array<Record<string, unknown>>;
  skills: Array<Record<string, unknown>>;
  memory_write_backs: Array<{ at: string; told_in: string | null; outcomes: Array<Record<string, unknown>> }>;
}
interface UsagePage {
  data: RunUsage[];
  next_page: string | null;
}

const TOOLS = [
  { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
];

const BACKENDS: Record<string, () => Promise<{ databaseUrl?: string; drop?: () => Promise<void> }>> = {
  SQLite: async () => ({}),
  PostgreSQL: async () => {
    const schema = await emptySchema();
    return { databaseUrl: schema.url, drop: () => schema.drop() };
  },
};
// PostgreSQL is left out only outside CI without a server (`postgresUnavailable`); in CI it runs.
const RUNNING = Object.keys(BACKENDS).filter((n) => n !== "PostgreSQL" || postgresUnavailable() === null);

it("the edge reads the facts the runtime writes, by the same names", () => {
  expect(RESOURCES_REALIZED_TYPE).toBe(RESOURCES_REALIZED);
  expect(MEMORY_WRITTEN_BACK_TYPE).toBe(MEMORY_WRITTEN_BACK);
});

describe.each(RUNNING)("a session's resource usage on %s", { timeout: 90_000 }, (backend) => {
  let fake: FakeModelServer;
  let t: TestServer;
  let drop: (() => Promise<void>) | undefined;
  let environmentId: string;
  let agentId: string;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    const db = await BACKENDS[backend]!();
    drop = db.drop;
    t = await startTestServer({
      env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
      workerPollMs: 50,
      allowPrivateHosts: LOOPBACK,
      ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}),
    });
    environmentId = (
      await t.client.beta.environments.create({
        name: "usage-bwrap",
        config: { type: "cloud", sandbox: { tier: "bwrap", provisioning: "eager" } } as never,
      })
    ).id;
    agentId = (await t.client.beta.agents.create({ name: "usage", model: MODEL, tools: TOOLS } as never)).id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await drop?.();
  });
  beforeEach(() => {
    fake.setFallback({ kind: "text", text: "ok" });
  });

  const usage = (client: Anthropic, sessionId: string, query: Record<string, string | number> = {}) =>
    client.get<UsagePage>(`/v1/awaken/sessions/${encodeURIComponent(sessionId)}/resource_usage`, { query });

  async function turn(sessionId: string, allowError = false): Promise<WireEvent[]> {
    const idles = (h: WireEvent[]) => h.filter((e) => e.type === "session.status_idle").length;
    const before = idles(await history(t.client, sessionId));
    await t.client.beta.sessions.events.send(sessionId, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, sessionId, (h) => idles(h) > before, 30_000);
    const error = events.find((e) => e.type === "session.error");
    if (error && !allowError) throw new Error(`the run failed: ${JSON.stringify(error)}`);
    return events;
  }

  async function keyFor(role: string, workspaceId?: string): Promise<Anthropic> {
    const response = await fetch(`${t.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ role, ...(workspaceId ? { workspace_id: workspaceId } : {}) }),
    });
    expect(response.status).toBe(200);
    const { key } = (await response.json()) as { key: string };
    return new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });
  }

  async function accessToken(sessionId: string): Promise<Anthropic> {
    const response = await fetch(`${t.server.url}/v1/awaken/access_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ operations: ["read"], session_id: sessionId }),
    });
    expect(response.status).toBe(200);
    const { token } = (await response.json()) as { token: string };
    return new Anthropic({ apiKey: token, baseURL: t.server.url, maxRetries: 0 });
  }

  it("lists, per run in commit order, the file (digest, mount path), the store and the write-back outcomes", async () => {
    const bytes = Buffer.from("quarterly numbers: 42\n");
    const file = await t.client.beta.files.upload({
      file: await toFile(bytes, "numbers.txt", { type: "text/plain" }),
    });
    const store = await t.client.beta.memoryStores.create({ name: "prefs" });
    await t.client.beta.memoryStores.memories.create(store.id, { path: "/notes/a.md", content: "first" });
    const s = await t.client.beta.sessions.create({
      agent: agentId,
      environment_id: environmentId,
      resources: [
        { type: "file", file_id: file.id, mount_path: "/mnt/data/numbers.txt" },
        { type: "memory_store", memory_store_id: store.id },
      ],
    });
    const runtime = await keyFor("runtime");
    // Nothing has run yet: nothing was realized.
    expect(await usage(runtime, s.id)).toEqual({ data: [], next_page: null });

    fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: { command: "cat /mnt/data/numbers.txt; echo -n second > /mnt/memory/prefs/notes/b.md" },
    });
    await turn(s.id);
    const first = await usage(runtime, s.id);
    expect(first.next_page).toBeNull();
    expect(first.data).toHaveLength(1);
    const run = first.data[0]!;
    expect(run).toMatchObject({
      type: "run_resource_usage",
      run_id: expect.stringMatching(/^[A-Za-z]+_\w+/),
      realized_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      mode: "mounted",
      skills: [],
    });
    expect(run.resources).toEqual(
      expect.arrayContaining([
        {
          type: "file",
          id: expect.any(String),
          file_id: file.id,
          mount_path: "/mnt/data/numbers.txt",
          digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
          size_bytes: bytes.length,
        },
        {
          type: "memory_store",
          memory_store_id: store.id,
          mount_path: "/mnt/memory/prefs",
          access: "read_write",
        },
      ]),
    );
    const outcomes = run.memory_write_backs.flatMap((w) => w.outcomes);
    expect(outcomes).toContainEqual(
      expect.objectContaining({
        memory_store_id: store.id,
        path: "notes/b.md",
        outcome: "written",
        memory_id: expect.any(String),
        version_id: expect.any(String),
      }),
    );
    expect(run.memory_write_backs[0]).toMatchObject({ at: expect.any(String), told_in: expect.any(String) });

    // The session's resources change; a second run sees the change, the first run's record stays.
    const fileResource = run.resources.find((r) => r.type === "file")!;
    await t.client.beta.sessions.resources.delete(fileResource.id as string, { session_id: s.id });
    await turn(s.id);
    const both = await usage(runtime, s.id);
    expect(both.data).toHaveLength(2);
    expect(both.data[0]).toEqual(run);
    expect(both.data[1]!.run_id).not.toBe(run.run_id);
    expect(both.data[1]!.resources.map((r) => r.type)).toEqual(["memory_store"]);

    // One run a page, with the wire's cursor.
    const one = await usage(runtime, s.id, { limit: 1 });
    expect(one.data).toEqual([run]);
    expect(one.next_page).toEqual(expect.any(String));
    const two = await usage(runtime, s.id, { limit: 1, page: one.next_page! });
    expect(two).toEqual({ data: [both.data[1]], next_page: null });
    await expectApiError(usage(runtime, s.id, { page: "not-a-cursor" }), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: [/page/],
    });
    await expectApiError(usage(runtime, s.id, { limit: 0 }), Anthropic.BadRequestError, BAD_REQUEST);

    // An access token reads the usage of the session it is confined to, and of no other.
    const elsewhere = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    expect(await usage(await accessToken(s.id), s.id)).toEqual(both);
    await expectApiError(usage(await accessToken(elsewhere.id), s.id), Anthropic.NotFoundError, NOT_FOUND);

    // Another workspace's session is not found; so is a deleted one.
    const other = await keyFor("admin", `wrkspc_usage_${backend.toLowerCase()}_${Date.now()}`);
    await expectApiError(usage(other, s.id), Anthropic.NotFoundError, NOT_FOUND);
    await t.client.beta.sessions.delete(s.id);
    await expectApiError(usage(runtime, s.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(usage(runtime, "sesn_../../etc"), Anthropic.NotFoundError, NOT_FOUND);
  });

  it("says a repository had a token, never the token", async () => {
    const token = "ghp_resourceUsageTokenNeverShown0123456789";
    const s = await t.client.beta.sessions.create({
      agent: agentId,
      environment_id: environmentId,
      // Nothing listens there: the clone fails after the run has recorded what it realized.
      resources: [
        { type: "github_repository", url: "http://127.0.0.1:9/acme/widgets.git", authorization_token: token },
      ],
    });
    await turn(s.id, true);
    const response = await fetch(`${t.server.url}/v1/awaken/sessions/${s.id}/resource_usage`, {
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain(token);
    const page = JSON.parse(text) as UsagePage;
    expect(page.data[0]?.resources).toEqual([
      {
        type: "github_repository",
        id: expect.any(String),
        mount_path: expect.any(String),
        has_token: true,
        checkout: null,
      },
    ]);
  });
});
