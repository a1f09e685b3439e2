/**
 * The admin audit through real HTTP: changes made with the official SDK (agents, environments,
 * vaults, credentials) and the key routes are read back from `GET /v1/awaken/audit`, newest first,
 * with the key that made them; no planted secret (a credential token, an API key or its hash)
 * reaches an audit row, response or the database's audit table; a refused change writes no row;
 * another workspace's rows never appear.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import Anthropic, { BadRequestError, PermissionDeniedError } from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aiSdkChat } from "../support/aiSdkChat.js";
import { MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50 });
});
afterAll(() => t.close());

interface AuditDto {
  type: string;
  id: string;
  workspace_id: string;
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string;
  revision: number | null;
  before_digest: string | null;
  after_digest: string | null;
  created_at: string;
}

/** Every response body this test read from the audit, to search for planted secrets. */
const auditBodies: string[] = [];

async function call(method: string, path: string, body?: unknown, key = TEST_API_KEY) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (path.startsWith("/v1/awaken/audit")) auditBodies.push(text);
  return { status: response.status, json: JSON.parse(text) as unknown };
}

async function audit(query = "", key = TEST_API_KEY): Promise<AuditDto[]> {
  const { status, json } = await call("GET", `/v1/awaken/audit${query}`, undefined, key);
  expect(status, JSON.stringify(json)).toBe(200);
  return (json as { data: AuditDto[] }).data;
}

async function mint(role: string, extra: Record<string, unknown> = {}, by = TEST_API_KEY) {
  const { status, json } = await call("POST", "/v1/awaken/api_keys", { role, ...extra }, by);
  expect(status, JSON.stringify(json)).toBe(200);
  return json as { id: string; key: string; workspace_id: string };
}

const clientOf = (key: string) => new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const PLANTED_TOKEN = "planted-bearer-token-0f1e2d3c";
const ROTATED_TOKEN = "planted-rotated-token-4b5a6978";

describe("the admin audit", () => {
  it("records each change with its key, newest first, filtered and paged; no secret anywhere", async () => {
    const builderKey = await mint("builder", { label: "audit-builder" });
    const builder = clientOf(builderKey.key);

    const agent = await builder.beta.agents.create({ name: "audited", model: MODEL });
    await builder.beta.agents.update(agent.id, { version: agent.version, system: "v2" });
    await builder.beta.agents.archive(agent.id);
    const env = await builder.beta.environments.create({ name: "audited-env" });
    await builder.beta.environments.update(env.id, { name: "renamed" });
    await builder.beta.environments.archive(env.id);
    await builder.beta.environments.delete(env.id);
    const vault = await builder.beta.vaults.create({ display_name: "audited-vault" });
    await builder.beta.vaults.update(vault.id, { display_name: "renamed-vault" });
    const credential = await builder.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: PLANTED_TOKEN, mcp_server_url: "https://mcp.example.com/mcp" },
    });
    await builder.beta.vaults.credentials.update(credential.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token: ROTATED_TOKEN },
    });
    await builder.beta.vaults.credentials.update(credential.id, {
      vault_id: vault.id,
      display_name: "named",
    });
    await builder.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });
    await builder.beta.vaults.credentials.delete(credential.id, { vault_id: vault.id });
    await builder.beta.vaults.archive(vault.id);
    await builder.beta.vaults.delete(vault.id);
    const extra = await mint("runtime", { label: "short-lived" });
    expect((await call("POST", `/v1/awaken/api_keys/${extra.id}/revoke`)).status).toBe(200);

    const bootstrapId = (
      (await call("GET", "/v1/awaken/api_keys?limit=100")).json as { data: { id: string; label: string }[] }
    ).data.find((k) => k.label === "default")!.id;

    const all = await audit("?limit=100");
    const mine = all.filter((e) => e.actor === builderKey.id);
    expect(mine.map((e) => `${e.resource_type}.${e.action}`)).toEqual([
      "vault.delete",
      "vault.archive",
      "credential.delete",
      "credential.archive",
      "credential.update",
      "credential.rotate",
      "credential.create",
      "vault.update",
      "vault.create",
      "environment.delete",
      "environment.archive",
      "environment.update",
      "environment.create",
      "agent.archive",
      "agent.update",
      "agent.create",
    ]);
    // Newest first, every row of this workspace.
    const times = all.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(all.every((e) => e.workspace_id === "wrkspc_default" && e.type === "audit_entry")).toBe(true);
    // Key changes name the admin key that made them; the server's first start is `bootstrap`.
    expect(all.filter((e) => e.resource_type === "api_key" && e.actor === bootstrapId).length).toBe(3);
    expect(all.find((e) => e.resource_id === extra.id && e.action === "revoke")).toMatchObject({
      actor: bootstrapId,
    });
    expect(all.find((e) => e.resource_type === "workspace")).toMatchObject({
      actor: "bootstrap",
      action: "create",
      resource_id: "wrkspc_default",
    });

    // Versions and digests: update publishes version 2, the archive's before is the update's after.
    const agentRows = mine.filter((e) => e.resource_type === "agent");
    expect(agentRows.map((e) => e.revision)).toEqual([2, 2, 1]);
    expect(agentRows[2]!.before_digest).toBeNull();
    expect(agentRows[1]!.before_digest).toBe(agentRows[2]!.after_digest);
    expect(agentRows[0]!.before_digest).toBe(agentRows[1]!.after_digest);
    expect(agentRows[0]!.after_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(mine.find((e) => e.action === "rotate")).toMatchObject({ revision: 2 });
    expect(
      mine.find((e) => e.resource_type === "credential" && e.action === "delete")?.after_digest,
    ).toBeNull();

    // Filters and pages.
    const rotations = await audit(`?resource_type=credential&action=rotate`);
    expect(rotations.map((e) => e.resource_id)).toEqual([credential.id]);
    const ofAgent = await audit(`?resource_id=${agent.id}`);
    expect(ofAgent.map((e) => e.action)).toEqual(["archive", "update", "create"]);
    const seen: string[] = [];
    let page: string | null = null;
    do {
      const { json } = await call("GET", `/v1/awaken/audit?limit=3${page ? `&page=${page}` : ""}`);
      const body = json as { data: AuditDto[]; next_page: string | null };
      seen.push(...body.data.map((e) => e.id));
      page = body.next_page;
    } while (page);
    expect(seen).toEqual(all.map((e) => e.id));

    // No secret: not in any audit response, not in the audit table.
    const secrets = [PLANTED_TOKEN, ROTATED_TOKEN, TEST_API_KEY, builderKey.key, extra.key];
    const hashes = secrets.map(sha256);
    for (const body of auditBodies) {
      for (const secret of [...secrets, ...hashes]) expect(body).not.toContain(secret);
    }
    const db = new SqliteDatabase(join(t.dataDir, "awaken.db"), { readonly: true });
    try {
      const rows = JSON.stringify(db.prepare("SELECT * FROM admin_audit").all());
      expect(rows).toContain(agent.id);
      for (const secret of [...secrets, ...hashes]) expect(rows).not.toContain(secret);
    } finally {
      db.close();
    }
  });

  it("records an environment key's creation and revocation, never the key; a second revoke records nothing", async () => {
    const env = await t.client.beta.environments.create({ name: "keyed", config: { type: "self_hosted" } });
    const created = await call("POST", `/v1/awaken/environments/${env.id}/keys`, { name: "worker-1" });
    expect(created.status).toBe(200);
    const key = created.json as { id: string; key: string };
    const path = `/v1/awaken/environments/${env.id}/keys/${key.id}/revoke`;
    expect((await call("POST", path)).status).toBe(200);
    expect((await call("POST", path)).status).toBe(200);
    const rows = await audit(`?resource_type=environment_key&resource_id=${key.id}`);
    expect(rows.map((e) => e.action)).toEqual(["revoke", "create"]);
    expect(rows[1]).toMatchObject({ before_digest: null, resource_id: key.id });
    expect(rows[0]!.before_digest).toBe(rows[1]!.after_digest);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(key.key);
    expect(text).not.toContain(sha256(key.key));
  });

  it("a refused change writes no audit row", async () => {
    const before = await audit("?limit=100");
    const client = t.client;
    await expect(client.beta.agents.create({ name: "", model: MODEL })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    await expect(
      client.beta.environments.create({
        name: "weak",
        config: { type: "cloud", sandbox: { tier: "none" } } as never,
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
    const vault = await client.beta.vaults.create({ display_name: "refusals" });
    const credentialBody = {
      auth: {
        type: "static_bearer" as const,
        token: PLANTED_TOKEN,
        mcp_server_url: "https://a.example.com/mcp",
      },
    };
    await client.beta.vaults.credentials.create(vault.id, credentialBody);
    // A second live credential for the same MCP server is refused (its usage is taken).
    await expect(client.beta.vaults.credentials.create(vault.id, credentialBody)).rejects.toThrow();
    expect((await call("POST", "/v1/awaken/api_keys", { role: "owner" })).status).toBe(400);
    expect((await call("POST", "/v1/awaken/api_keys/key_unknown/revoke")).status).toBe(404);
    const after = await audit("?limit=100");
    // Only the vault and the one credential that were made.
    expect(after.length - before.length).toBe(2);
    expect(after.slice(0, 2).map((e) => `${e.resource_type}.${e.action}`)).toEqual([
      "credential.create",
      "vault.create",
    ]);
  });

  it("is an admin's, confined to its workspace, and refuses bad queries with a 400", async () => {
    const builderKey = await mint("builder");
    const denied = await call("GET", "/v1/awaken/audit", undefined, builderKey.key);
    expect(denied.status).toBe(403);
    expect(JSON.stringify(denied.json)).toMatch(/admin/);

    const otherAdmin = await mint("admin", { workspace_id: "wrkspc_audit_other" });
    const other = clientOf(otherAdmin.key);
    const otherAgent = await other.beta.agents.create({ name: "elsewhere", model: MODEL });
    const theirs = await audit("?limit=100", otherAdmin.key);
    expect(theirs.map((e) => `${e.resource_type}.${e.action}`)).toEqual([
      "agent.create",
      "api_key.create",
      "workspace.create",
    ]);
    expect(theirs.every((e) => e.workspace_id === "wrkspc_audit_other")).toBe(true);
    const ours = await audit("?limit=100");
    expect(ours.some((e) => e.resource_id === otherAgent.id)).toBe(false);
    expect(ours.every((e) => e.workspace_id === "wrkspc_default")).toBe(true);
    expect(await audit(`?resource_id=${otherAgent.id}`)).toEqual([]);

    for (const query of [
      "?resource_type=bogus",
      "?action=explode",
      "?page=not-a-cursor",
      "?limit=0",
      "?x=1",
    ]) {
      const { status, json } = await call("GET", `/v1/awaken/audit${query}`);
      expect(status, query).toBe(400);
      expect(JSON.stringify(json)).toMatch(/invalid_request_error/);
    }
    await expect(clientOf(builderKey.key).beta.agents.list()).resolves.toBeDefined();
    await expect(
      clientOf((await mint("runtime")).key).beta.agents.create({ name: "x", model: MODEL }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it("names the server itself as system for what it makes on a client's behalf", async () => {
    const agent = await t.client.beta.agents.create({ name: "ui-client", model: MODEL });
    // A UI protocol names no environment: the workspace's default one is made on first use.
    const ui = aiSdkChat({ baseUrl: t.server.url, apiKey: TEST_API_KEY, body: { agentId: agent.id } });
    await ui.chat.sendMessage({ text: "hello" });
    await ui.waitForFinishes(1);
    expect(ui.errors).toEqual([]);
    const made = await audit("?resource_type=environment&action=create");
    expect(made[0]).toMatchObject({ actor: "system", workspace_id: "wrkspc_default" });
  });
});
