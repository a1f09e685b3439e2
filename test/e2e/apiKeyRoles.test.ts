/**
 * API keys with roles, through the official SDK over real HTTP: the bootstrap key is an admin that
 * mints runtime, builder and admin keys (shown once); each role reaches exactly its routes (403 with
 * the wire's permission error otherwise, on every edge); a revoked key is refused at once; another
 * workspace's records answer 404, and its keys list only its own.
 */
import Anthropic, { AuthenticationError, NotFoundError, PermissionDeniedError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50 });
});
afterAll(() => t.close());

interface KeyDto {
  id: string;
  key?: string;
  role: string;
  workspace_id: string;
  label: string | null;
  revoked_at: string | null;
}

async function admin(method: string, path: string, body?: unknown, key = TEST_API_KEY) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, never> };
}

async function mint(role: string, extra: Record<string, string> = {}, by = TEST_API_KEY): Promise<KeyDto> {
  const { status, json } = await admin("POST", "/v1/awaken/api_keys", { role, ...extra }, by);
  expect(status, JSON.stringify(json)).toBe(200);
  return json as unknown as KeyDto;
}

const clientOf = (key: string) => new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });

describe("API keys with roles", () => {
  it("a builder authors, a runtime key runs sessions of what was published, neither reaches past its role", async () => {
    const builderKey = await mint("builder", { label: "ci" });
    const runtimeKey = await mint("runtime", { label: "checkout-app" });
    expect(builderKey).toMatchObject({ role: "builder", label: "ci", workspace_id: "wrkspc_default" });
    expect(builderKey.key).toMatch(/^sk-awaken-/);
    const builder = clientOf(builderKey.key!);
    const runtime = clientOf(runtimeKey.key!);

    const agent = await builder.beta.agents.create({ name: "published", model: MODEL });
    const environment = await builder.beta.environments.create({ name: "roles" });
    const session = await runtime.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await runtime.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    await waitForHistory(runtime, session.id, (h) => h.some(isEndTurnIdle), 15_000);
    expect((await runtime.models.list()).data.length).toBeGreaterThan(0);

    const denied = await runtime.beta.agents.create({ name: "nope", model: MODEL }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(PermissionDeniedError);
    expect((denied as PermissionDeniedError).message).toMatch(
      /POST \/v1\/agents needs a builder or admin key; this key's role is runtime/,
    );
    await expect(runtime.beta.agents.list()).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(runtime.beta.vaults.create({ display_name: "v" })).rejects.toBeInstanceOf(
      PermissionDeniedError,
    );
    // Other protocol edges run sessions, which every role may.
    const card = await fetch(`${t.server.url}/v1/a2a/agents/${agent.id}/.well-known/agent-card.json`, {
      headers: { authorization: `Bearer ${runtimeKey.key}` },
    });
    expect(card.status).toBe(200);

    // Keys are an admin's.
    expect((await admin("POST", "/v1/awaken/api_keys", { role: "runtime" }, builderKey.key)).status).toBe(
      403,
    );
    expect((await admin("GET", "/v1/awaken/api_keys", undefined, runtimeKey.key)).status).toBe(403);
    expect(
      (await admin("POST", `/v1/awaken/environments/${environment.id}/keys`, {}, builderKey.key)).status,
    ).toBe(403);
  });

  it("lists keys without the keys; a revoked key is refused at once; nobody revokes the key they sign with", async () => {
    const runtimeKey = await mint("runtime");
    const runtime = clientOf(runtimeKey.key!);
    await runtime.models.list();
    const listed = await admin("GET", "/v1/awaken/api_keys?limit=1000");
    const data = (listed.json as unknown as { data: KeyDto[] }).data;
    expect(data.map((k) => k.id)).toContain(runtimeKey.id);
    expect(JSON.stringify(listed.json)).not.toContain(runtimeKey.key);
    expect(data.find((k) => k.label === "default" && k.role === "admin")).toBeDefined(); // the bootstrap key

    const revoked = await admin("POST", `/v1/awaken/api_keys/${runtimeKey.id}/revoke`);
    expect(revoked.json).toMatchObject({ id: runtimeKey.id, revoked_at: expect.any(String) });
    await expect(runtime.models.list()).rejects.toBeInstanceOf(AuthenticationError);
    // Revoking again keeps the first time.
    expect((await admin("POST", `/v1/awaken/api_keys/${runtimeKey.id}/revoke`)).json).toEqual(revoked.json);

    const second = await mint("admin");
    const self = await admin("POST", `/v1/awaken/api_keys/${second.id}/revoke`, undefined, second.key);
    expect(self.status).toBe(400);
    expect(self.json).toMatchObject({ error: { message: expect.stringMatching(/another admin key/) } });
    expect((await admin("POST", "/v1/awaken/api_keys/key_nope/revoke")).status).toBe(404);
  });

  it("refuses a missing or unknown role, unknown fields and a malformed workspace, writing nothing", async () => {
    const before = (await admin("GET", "/v1/awaken/api_keys?limit=1000")).json as unknown as {
      data: KeyDto[];
    };
    for (const body of [
      {},
      { role: "root" },
      { role: "runtime", scopes: ["*"] },
      { role: "admin", workspace_id: "Bad Id" },
    ]) {
      const answer = await admin("POST", "/v1/awaken/api_keys", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    const after = (await admin("GET", "/v1/awaken/api_keys?limit=1000")).json as unknown as {
      data: KeyDto[];
    };
    expect(after.data.length).toBe(before.data.length);
  });

  it("another workspace: its admin sees its own records and keys only; another workspace's records are 404", async () => {
    const own = clientOf(TEST_API_KEY);
    const agent = await own.beta.agents.create({ name: "default's", model: MODEL });
    const teamAdmin = await mint("admin", { workspace_id: "wrkspc_team-b" });
    expect(teamAdmin.workspace_id).toBe("wrkspc_team-b");
    const team = clientOf(teamAdmin.key!);
    await expect(team.beta.agents.retrieve(agent.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await team.beta.agents.list()).data).toEqual([]);
    const theirs = await team.beta.agents.create({ name: "team-b's", model: MODEL });
    await expect(own.beta.agents.retrieve(theirs.id)).rejects.toBeInstanceOf(NotFoundError);

    const keys = (await admin("GET", "/v1/awaken/api_keys", undefined, teamAdmin.key)).json as unknown as {
      data: KeyDto[];
    };
    expect(keys.data.map((k) => k.id)).toEqual([teamAdmin.id]);
    // Only the default workspace's admins make keys elsewhere; nobody revokes across workspaces.
    const elsewhere = await admin(
      "POST",
      "/v1/awaken/api_keys",
      { role: "runtime", workspace_id: "wrkspc_default" },
      teamAdmin.key,
    );
    expect(elsewhere.status).toBe(403);
    const defaults = (await admin("GET", "/v1/awaken/api_keys?limit=1000")).json as unknown as {
      data: KeyDto[];
    };
    const target = defaults.data.find((k) => k.workspace_id === "wrkspc_default" && k.revoked_at === null)!;
    expect(
      (await admin("POST", `/v1/awaken/api_keys/${target.id}/revoke`, undefined, teamAdmin.key)).status,
    ).toBe(404);
  });
});
