/**
 * MCP tools and credential pinning, through the official SDK against a scripted model and
 * a real MCP server made with the official MCP SDK that requires `Authorization: Bearer …`: the
 * session's pinned credential revision reaches exactly that server's connection, rotation does not
 * move a running session's pin, admission refuses archived credentials cleanly, and MCP calls pass
 * the same permission gate (with confirmations) as built-in tools.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  isActionIdle,
  isEndTurnIdle,
  MODEL,
  stopReason,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let mcp: BearerMcpServer;
let t: TestServer;
let environmentId: string;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  mcp = await startBearerMcpServer();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    // Its environments run tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
    // The MCP server and token endpoints of these tests listen on the loopback.
    allowPrivateHosts: LOOPBACK,
  });
  const environment = await t.client.beta.environments.create({
    name: "mcp",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  environmentId = environment.id;
});
afterAll(async () => {
  await t.close();
  await mcp.close();
  await fake.close();
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "done" });
});

type Policy = { type: "always_allow" | "always_ask" };

async function mcpAgent(policy?: Policy, url = mcp.url) {
  return t.client.beta.agents.create({
    name: "mcp-user",
    model: MODEL,
    mcp_servers: [{ name: "docs", type: "url", url }],
    tools: [
      policy
        ? { type: "mcp_toolset", mcp_server_name: "docs", default_config: { permission_policy: policy } }
        : { type: "mcp_toolset", mcp_server_name: "docs" },
    ] as never,
  });
}

async function vaultWith(token: string, url = mcp.url) {
  const vault = await t.client.beta.vaults.create({ display_name: "mcp" } as never);
  const credential = await t.client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token, mcp_server_url: url },
  } as never);
  return { vault, credential };
}

async function session(agentId: string, vaultIds: string[]) {
  return t.client.beta.sessions.create({
    agent: agentId,
    environment_id: environmentId,
    ...(vaultIds.length > 0 ? { vault_ids: vaultIds } : {}),
  } as never);
}

const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);
const endedTurns = (events: WireEvent[]) =>
  events.filter((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");

/** Sends one message whose answer is a call to `lookup`, and waits for the turn to end. */
async function lookupTurn(sessionId: string, q: string, turns: number): Promise<WireEvent[]> {
  fake.enqueue({ kind: "tool_use", name: "lookup", input: { q } });
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage(`look up ${q}`)] });
  return waitForHistory(t.client, sessionId, (h) => endedTurns(h).length >= turns);
}

function opens(sessionId: string) {
  const db = new SqliteDatabase(join(t.dataDir, "awaken.db"), { readonly: true });
  try {
    return db
      .prepare(
        "select credential_id, revision, holder, outcome, reason, run_id, owner from credential_opens where session_id = ? order by created_at, id",
      )
      .all(sessionId) as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

/** Every row of every table, as text (to search for a secret that must not be there). */
function everyRow(): string {
  const db = new SqliteDatabase(join(t.dataDir, "awaken.db"), { readonly: true });
  try {
    const tables = db.prepare("select name from sqlite_master where type = 'table'").all() as Array<{
      name: string;
    }>;
    return tables.map(({ name }) => JSON.stringify(db.prepare(`select * from "${name}"`).all())).join("\n");
  } finally {
    db.close();
  }
}

function token(label: string): string {
  const value = `mcp-${label}-${Math.random().toString(36).slice(2)}`;
  mcp.accepted.add(value);
  return value;
}

describe("MCP tools with a pinned static_bearer", () => {
  it("offers the server's tools, runs the call server-side and the server sees exactly the pinned token", async () => {
    const pinned = token("pinned");
    const agent = await mcpAgent({ type: "always_allow" });
    const { vault, credential } = await vaultWith(pinned);
    const s = await session(agent.id, [vault.id]);
    const before = mcp.calls.length;
    const events = await lookupTurn(s.id, "custody", 1);

    const use = ofType(events, "agent.mcp_tool_use")[0];
    expect(use).toMatchObject({
      name: "lookup",
      mcp_server_name: "docs",
      input: { q: "custody" },
      evaluated_permission: "allow",
    });
    expect(ofType(events, "agent.mcp_tool_result")[0]).toMatchObject({
      mcp_tool_use_id: use!.id,
      is_error: false,
      content: [{ type: "text", text: "definition of custody" }],
    });
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });
    expect(mcp.calls.slice(before)).toEqual([{ tool: "lookup", args: { q: "custody" }, token: pinned }]);

    // The model was offered the MCP tools under their own names.
    const request = fake.requests.at(-2)?.body as { tools?: Array<{ name: string }> };
    expect(request.tools?.map((tool) => tool.name)).toEqual(expect.arrayContaining(["lookup", "counter"]));
    // The session shows no material, only the vault it was given.
    const retrieved = await t.client.beta.sessions.retrieve(s.id);
    expect(JSON.stringify(retrieved)).not.toContain(pinned);
    expect(JSON.stringify(events)).not.toContain(pinned);
    // Every open is audited: which pin, which holder, who; never the secret.
    const audit = opens(s.id);
    expect(audit.length).toBeGreaterThan(0);
    expect(audit[0]).toMatchObject({
      credential_id: credential.id,
      revision: 1,
      holder: "mcp_connection",
      outcome: "opened",
      reason: null,
      owner: expect.stringMatching(/^local/),
    });
    expect(JSON.stringify(audit)).not.toContain(pinned);
    expect(everyRow()).not.toContain(pinned);
  });

  it("an mcp_oauth credential's access token is pinned and presented the same way", async () => {
    const access = token("oauth");
    const agent = await mcpAgent({ type: "always_allow" });
    const vault = await t.client.beta.vaults.create({ display_name: "oauth" } as never);
    await t.client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: access,
        mcp_server_url: mcp.url,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      },
    } as never);
    const s = await session(agent.id, [vault.id]);
    const before = mcp.calls.length;
    await lookupTurn(s.id, "oauth", 1);
    expect(mcp.calls.slice(before)).toEqual([{ tool: "lookup", args: { q: "oauth" }, token: access }]);
  });

  it("rotation keeps a running session on its pinned revision; a new session pins the newest", async () => {
    const first = token("rev1");
    const second = token("rev2");
    const agent = await mcpAgent({ type: "always_allow" });
    const { vault, credential } = await vaultWith(first);
    const s1 = await session(agent.id, [vault.id]);
    let mark = mcp.calls.length;
    await lookupTurn(s1.id, "before", 1);
    expect(mcp.calls.slice(mark).map((c) => c.token)).toEqual([first]);

    await t.client.beta.vaults.credentials.update(credential.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token: second },
    } as never);

    mark = mcp.calls.length;
    await lookupTurn(s1.id, "after", 2);
    expect(mcp.calls.slice(mark).map((c) => c.token)).toEqual([first]);
    expect(opens(s1.id).every((o) => o.revision === 1)).toBe(true);

    const s2 = await session(agent.id, [vault.id]);
    mark = mcp.calls.length;
    await lookupTurn(s2.id, "fresh", 1);
    expect(mcp.calls.slice(mark).map((c) => c.token)).toEqual([second]);
    expect(opens(s2.id).map((o) => o.revision)).toContain(2);
  });

  it("an archived credential is refused at admission: session.error, then a clean idle", async () => {
    const archivedToken = token("archived");
    const agent = await mcpAgent({ type: "always_allow" });
    const { vault, credential } = await vaultWith(archivedToken);
    const s = await session(agent.id, [vault.id]);
    await t.client.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });
    const presentedBefore = mcp.presented.length;

    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => endedTurns(h).length >= 1);
    const error = ofType(events, "session.error")[0] as { error: Record<string, unknown> } | undefined;
    expect(error?.error).toMatchObject({
      type: "mcp_authentication_failed_error",
      mcp_server_name: "docs",
      retry_status: { type: "exhausted" },
    });
    expect(String(error?.error.message)).toContain("archived");
    expect(stopReason(events.at(-1))).toEqual({ type: "retries_exhausted" });
    expect((await t.client.beta.sessions.retrieve(s.id)).status).toBe("idle");
    // Nothing was opened, and the server never saw the archived token.
    expect(mcp.presented.slice(presentedBefore)).not.toContain(archivedToken);
    expect(opens(s.id)).toMatchObject([{ outcome: "refused", credential_id: credential.id }]);
  });

  it.each([
    ["the credential is deleted", "deleted"],
    ["its vault is archived", "archived"],
    ["its vault is deleted", "deleted"],
  ])("admission refuses the pin when %s after pinning", async (what, reason) => {
    const agent = await mcpAgent({ type: "always_allow" });
    const { vault, credential } = await vaultWith(token("gone"));
    const s = await session(agent.id, [vault.id]);
    if (what === "the credential is deleted")
      await t.client.beta.vaults.credentials.delete(credential.id, { vault_id: vault.id });
    else if (what === "its vault is archived") await t.client.beta.vaults.archive(vault.id);
    else await t.client.beta.vaults.delete(vault.id);
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => endedTurns(h).length >= 1);
    const error = ofType(events, "session.error")[0] as { error: Record<string, unknown> } | undefined;
    expect(error?.error).toMatchObject({ type: "mcp_authentication_failed_error", mcp_server_name: "docs" });
    expect(String(error?.error.message)).toContain(reason);
    expect(opens(s.id)).toMatchObject([{ outcome: "refused" }]);
  });

  it("without a vault the server's 401 becomes mcp_authentication_failed_error", async () => {
    const agent = await mcpAgent({ type: "always_allow" });
    const s = await session(agent.id, []);
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => endedTurns(h).length >= 1);
    expect(ofType(events, "session.error")[0]).toMatchObject({
      error: { type: "mcp_authentication_failed_error", mcp_server_name: "docs" },
    });
    expect(stopReason(events.at(-1))).toEqual({ type: "retries_exhausted" });
    expect(opens(s.id)).toEqual([]);
  });

  it("an unreachable server is mcp_connection_failed_error", async () => {
    const agent = await mcpAgent({ type: "always_allow" }, "http://127.0.0.1:9/mcp");
    const s = await session(agent.id, []);
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => endedTurns(h).length >= 1);
    expect(ofType(events, "session.error")[0]).toMatchObject({
      error: { type: "mcp_connection_failed_error", mcp_server_name: "docs" },
    });
    expect((await t.client.beta.sessions.retrieve(s.id)).status).toBe("idle");
  });
});

describe("MCP servers and limited networking", () => {
  async function limitedSession(allowMcpServers: boolean, vaultId: string) {
    const agent = await mcpAgent({ type: "always_allow" });
    const environment = await t.client.beta.environments.create({
      name: "limited",
      config: {
        type: "cloud",
        sandbox: { tier: "none" },
        networking: { type: "limited", allowed_hosts: [], allow_mcp_servers: allowMcpServers },
      } as never,
    });
    return t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      vault_ids: [vaultId],
    } as never);
  }

  it("without allow_mcp_servers the server is not contacted and nothing is opened", async () => {
    const { vault } = await vaultWith(token("limited"));
    const s = await limitedSession(false, vault.id);
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => endedTurns(h).length >= 1);
    expect(ofType(events, "session.error")[0]).toMatchObject({
      error: { type: "mcp_connection_failed_error", mcp_server_name: "docs" },
    });
    expect(opens(s.id)).toEqual([]);
  });

  it("with allow_mcp_servers the call runs", async () => {
    const { vault } = await vaultWith(token("allowed"));
    const s = await limitedSession(true, vault.id);
    const events = await lookupTurn(s.id, "egress", 1);
    expect(ofType(events, "agent.mcp_tool_result")[0]).toMatchObject({ is_error: false });
  });
});

describe("MCP calls pass the permission gate", () => {
  it("the default policy asks; allow runs the call on the server", async () => {
    const pinned = token("ask");
    const agent = await mcpAgent();
    const { vault } = await vaultWith(pinned);
    const s = await session(agent.id, [vault.id]);
    const before = mcp.calls.length;
    fake.enqueue({ kind: "tool_use", name: "lookup", input: { q: "gate" } });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const parked = await waitForHistory(t.client, s.id, (h) => h.some(isActionIdle));
    const use = ofType(parked, "agent.mcp_tool_use")[0]!;
    expect(use).toMatchObject({ evaluated_permission: "ask", evaluation: { type: "always_ask" } });
    expect(stopReason(parked.at(-1))).toEqual({ type: "requires_action", event_ids: [use.id] });
    expect(mcp.calls.length).toBe(before);

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: use.id, result: "allow" }],
    });
    const after = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(after, "agent.mcp_tool_result")[0]).toMatchObject({
      mcp_tool_use_id: use.id,
      is_error: false,
    });
    expect(mcp.calls.slice(before)).toEqual([{ tool: "lookup", args: { q: "gate" }, token: pinned }]);
  });

  it("deny never calls the server; the model gets the denial as an agent.mcp_tool_result", async () => {
    const agent = await mcpAgent({ type: "always_ask" });
    const { vault } = await vaultWith(token("deny"));
    const s = await session(agent.id, [vault.id]);
    const before = mcp.calls.length;
    fake.enqueue({ kind: "tool_use", name: "lookup", input: { q: "no" } });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const parked = await waitForHistory(t.client, s.id, (h) => h.some(isActionIdle));
    const use = ofType(parked, "agent.mcp_tool_use")[0]!;
    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: use.id, result: "deny", deny_message: "no" }],
    });
    const after = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(after, "agent.mcp_tool_result")[0]).toMatchObject({
      mcp_tool_use_id: use.id,
      is_error: true,
      content: [{ type: "text", text: "The user denied this tool call: no" }],
    });
    expect(mcp.calls.length).toBe(before);
  });
});

describe("vault_ids at session creation", () => {
  it("an unknown vault is 404 and an archived one 400; nothing is created", async () => {
    const agent = await mcpAgent({ type: "always_allow" });
    await expect(session(agent.id, ["vlt_missing"])).rejects.toMatchObject({ status: 404 });
    const { vault } = await vaultWith(token("archived-vault"));
    await t.client.beta.vaults.archive(vault.id);
    await expect(session(agent.id, [vault.id])).rejects.toMatchObject({ status: 400 });
  });

  it("sessions.update still rejects vault_ids", async () => {
    const agent = await mcpAgent({ type: "always_allow" });
    const { vault } = await vaultWith(token("update"));
    const s = await session(agent.id, [vault.id]);
    await expect(
      t.client.beta.sessions.update(s.id, { vault_ids: [vault.id] } as never),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe("mcp_oauth refresh by the holder", () => {
  it("an expiring pinned token is refreshed once, committed as the next revision, and followed by its sessions", async () => {
    const stale = `stale-${Math.random().toString(36).slice(2)}`;
    const fresh = token("refreshed");
    const grants: Array<Record<string, string>> = [];
    const endpoint = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        const form = Object.fromEntries(new URLSearchParams(body));
        grants.push(form);
        const ok =
          form.grant_type === "refresh_token" &&
          form.refresh_token === "refresh-1" &&
          form.client_id === "cid" &&
          form.client_secret === "client-secret";
        res.writeHead(ok ? 200 : 400, { "content-type": "application/json" });
        res.end(
          JSON.stringify(
            ok
              ? { access_token: fresh, token_type: "Bearer", expires_in: 3600, refresh_token: "refresh-2" }
              : { error: "invalid_grant" },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    try {
      const tokenUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/token`;
      const agent = await mcpAgent({ type: "always_allow" });
      const vault = await t.client.beta.vaults.create({ display_name: "oauth-refresh" } as never);
      const credential = await t.client.beta.vaults.credentials.create(vault.id, {
        auth: {
          type: "mcp_oauth",
          access_token: stale,
          mcp_server_url: mcp.url,
          // Inside the holder's expiry margin: refreshed before first use.
          expires_at: new Date(Date.now() + 5_000).toISOString(),
          refresh: {
            refresh_token: "refresh-1",
            client_id: "cid",
            token_endpoint: tokenUrl,
            token_endpoint_auth: { type: "client_secret_post", client_secret: "client-secret" },
          },
        },
      } as never);
      const earlier = await session(agent.id, [vault.id]);
      const s = await session(agent.id, [vault.id]);
      const before = mcp.calls.length;

      await lookupTurn(s.id, "first", 1);
      expect(grants).toHaveLength(1);
      expect(mcp.calls.slice(before).map((c) => c.token)).toEqual([fresh]);
      expect(mcp.presented).not.toContain(stale);
      const rotated = await t.client.beta.vaults.credentials.retrieve(credential.id, { vault_id: vault.id });
      expect(JSON.stringify(rotated)).not.toContain(fresh);
      expect(opens(s.id)).toMatchObject([
        { outcome: "refreshed", revision: 1 },
        { outcome: "opened", revision: 2 },
      ]);

      // The session follows its refreshed pin; a session pinned to the same revision adopts it.
      await lookupTurn(s.id, "second", 2);
      await lookupTurn(earlier.id, "earlier", 1);
      expect(grants).toHaveLength(1);
      expect(mcp.calls.slice(before).map((c) => c.token)).toEqual([fresh, fresh, fresh]);
      expect(opens(earlier.id)).toMatchObject([{ outcome: "opened", revision: 2 }]);
      expect(everyRow()).not.toContain(fresh);
    } finally {
      endpoint.closeAllConnections();
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  });

  it("a failed refresh is mcp_authentication_failed_error and the stale token is never sent", async () => {
    const stale = `stale-${Math.random().toString(36).slice(2)}`;
    const agent = await mcpAgent({ type: "always_allow" });
    const vault = await t.client.beta.vaults.create({ display_name: "oauth-bad" } as never);
    await t.client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: stale,
        mcp_server_url: mcp.url,
        expires_at: new Date(Date.now() + 5_000).toISOString(),
        refresh: {
          refresh_token: "nope",
          client_id: "cid",
          token_endpoint: "http://127.0.0.1:9/token",
          token_endpoint_auth: { type: "none" },
        },
      },
    } as never);
    const s = await session(agent.id, [vault.id]);
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => endedTurns(h).length >= 1);
    const error = ofType(events, "session.error")[0] as { error: Record<string, unknown> } | undefined;
    expect(error?.error).toMatchObject({ type: "mcp_authentication_failed_error", mcp_server_name: "docs" });
    expect(String(error?.error.message)).toContain("refreshing it failed");
    expect(mcp.presented).not.toContain(stale);
  });
});
