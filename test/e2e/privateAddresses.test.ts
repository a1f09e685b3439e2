/**
 * Host-made connections on a user's behalf never reach the host's own loopback or private network
 * unless the operator allow-listed the host: `mcp_oauth_validate` (MCP server and token endpoint)
 * answers 400 with nothing from the target, an MCP connection ends the turn with
 * `mcp_connection_failed_error`, a holder's refresh never reaches a forbidden token endpoint, and
 * `awaken up` / `awaken worker` refuse an allow-list entry they cannot read.
 */
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import {
  BAD_REQUEST,
  expectApiError,
  MODEL,
  stopReason,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";
import { plantedSecret, startVaultTestServer, type VaultTestServer } from "../support/vaultServer.js";

const POLICY = /loopback, link-local, private or reserved address/;
const HINT = /--allow-private-mcp-host or AWAKEN_ALLOW_PRIVATE_HOSTS/;

let mcp: BearerMcpServer;
/** A token endpoint on 127.0.0.2: a loopback address the allow-list `127.0.0.1` does not name. */
let tokenEndpoint: Server;
let tokenUrl: string;
const tokenRequests: string[] = [];

beforeAll(async () => {
  mcp = await startBearerMcpServer();
  tokenEndpoint = createServer((req, res) => {
    tokenRequests.push(req.url ?? "");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ access_token: "from-the-forbidden-endpoint", token_type: "Bearer" }));
  });
  await new Promise<void>((resolve) => tokenEndpoint.listen(0, "127.0.0.2", resolve));
  tokenUrl = `http://127.0.0.2:${(tokenEndpoint.address() as AddressInfo).port}/token`;
});
afterAll(async () => {
  await mcp.close();
  tokenEndpoint.closeAllConnections();
  await new Promise<void>((resolve) => tokenEndpoint.close(() => resolve()));
});

describe("mcp_oauth_validate and private addresses", () => {
  let open: VaultTestServer;
  let listed: VaultTestServer;
  beforeAll(async () => {
    open = await startVaultTestServer();
    listed = await startVaultTestServer({ allowPrivateHosts: LOOPBACK });
  });
  afterAll(async () => {
    await open.close();
    await listed.close();
  });

  // What the server itself answers to the probe's POST on /healthz (a GET-only route).
  const OWN_ANSWER = "POST is not allowed on /healthz";
  const opensOf = (t: VaultTestServer, credentialId: string) =>
    t.sql.prepare("select outcome from credential_opens where credential_id = ?").all(credentialId);

  it("a probe of the server's own port answers 400 naming the policy, with none of its answer", async () => {
    const port = new URL(open.server.url).port;
    // The server's own answer to the probe's POST is what an unguarded probe hands back.
    const own = await (await fetch(`${open.server.url}/healthz`, { method: "POST", body: "{}" })).text();
    expect(own).toContain(OWN_ANSWER);
    for (const url of [
      `http://127.0.0.1:${port}/healthz`,
      `http://2130706433:${port}/healthz`,
      `http://0177.0.0.1:${port}/healthz`,
      `http://localhost:${port}/healthz`,
      `http://[::ffff:127.0.0.1]:${port}/healthz`,
    ]) {
      const vault = await open.client.beta.vaults.create({ display_name: "ssrf" });
      const token = plantedSecret("ssrf");
      const credential = await open.client.beta.vaults.credentials.create(vault.id, {
        auth: { type: "static_bearer", token, mcp_server_url: url },
      });
      const bodies = open.bodies.length;
      const error = await expectApiError(
        open.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [/mcp_server_url/, POLICY, HINT] },
      );
      expect(JSON.stringify(error.error)).not.toContain(OWN_ANSWER);
      expect(open.bodies.slice(bodies).join("")).not.toContain(OWN_ANSWER);
      // Refused before the credential was opened: nothing was materialized for it.
      expect(opensOf(open, credential.id)).toEqual([]);
    }
  });

  it("allow-listed, the same probe reaches the server (and reports what it answered)", async () => {
    const vault = await listed.client.beta.vaults.create({ display_name: "listed" });
    const credential = await listed.client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "static_bearer",
        token: plantedSecret("listed"),
        mcp_server_url: `${listed.server.url}/healthz`,
      },
    });
    const validation = await listed.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, {
      vault_id: vault.id,
    });
    expect(validation.status).toBe("unknown");
    expect(validation.mcp_probe?.http_response).toMatchObject({
      status_code: 405,
      body: expect.stringContaining(OWN_ANSWER),
    });
  });

  it("a token endpoint the allow-list does not name is never called: 400 naming refresh.token_endpoint", async () => {
    const vault = await listed.client.beta.vaults.create({ display_name: "refresh" });
    const credential = await listed.client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        // Not accepted by the MCP server (401), so the probe refreshes.
        access_token: plantedSecret("stale"),
        mcp_server_url: mcp.url,
        refresh: {
          refresh_token: plantedSecret("refresh"),
          client_id: "cid",
          token_endpoint: tokenUrl,
          token_endpoint_auth: { type: "none" },
        },
      },
    });
    await expectApiError(
      listed.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/refresh\.token_endpoint/, /127\.0\.0\.2/, POLICY] },
    );
    expect(tokenRequests).toEqual([]);
  });
});

describe("MCP connections and private addresses", () => {
  let open: TestServer;
  let listed: TestServer;
  beforeAll(async () => {
    // No model key: the offline model calls `lookup` when asked to.
    open = await startTestServer({ workers: 1, workerPollMs: 50, allowWeakerTiers: true });
    listed = await startTestServer({
      workers: 1,
      workerPollMs: 50,
      allowPrivateHosts: LOOPBACK,
      allowWeakerTiers: true,
    });
  });
  afterAll(async () => {
    await open.close();
    await listed.close();
  });

  const endedTurns = (events: WireEvent[]) =>
    events.filter((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");

  async function lookupTurn(t: TestServer, auth: Record<string, unknown>): Promise<WireEvent[]> {
    const client = t.client;
    const agent = await client.beta.agents.create({
      name: "private-mcp",
      model: MODEL,
      mcp_servers: [{ name: "docs", type: "url", url: mcp.url }],
      tools: [
        {
          type: "mcp_toolset",
          mcp_server_name: "docs",
          default_config: { permission_policy: { type: "always_allow" } },
        },
      ],
    } as never);
    const vault = await client.beta.vaults.create({ display_name: "private" } as never);
    await client.beta.vaults.credentials.create(vault.id, { auth } as never);
    const environment = await client.beta.environments.create({
      name: "private",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      vault_ids: [vault.id],
    } as never);
    await client.beta.sessions.events.send(session.id, { events: [userMessage('call lookup {"q": "x"}')] });
    return waitForHistory(client, session.id, (h) => endedTurns(h).length >= 1, 20_000);
  }

  it("without the allow-list an MCP server on the loopback is mcp_connection_failed_error, never contacted", async () => {
    const token = plantedSecret("mcp");
    mcp.accepted.add(token);
    const presented = mcp.presented.length;
    const events = await lookupTurn(open, { type: "static_bearer", token, mcp_server_url: mcp.url });
    const error = events.find((e) => e.type === "session.error") as
      | { error: Record<string, unknown> }
      | undefined;
    expect(error?.error).toMatchObject({ type: "mcp_connection_failed_error", mcp_server_name: "docs" });
    expect(String(error?.error.message)).toMatch(POLICY);
    expect(String(error?.error.message)).toMatch(HINT);
    expect(events.some((e) => e.type === "agent.mcp_tool_result")).toBe(false);
    expect(mcp.presented.length).toBe(presented);
    expect(JSON.stringify(events)).not.toContain(token);
  });

  it("with the loopback allow-listed the same agent's call reaches the server", async () => {
    const token = plantedSecret("mcp-listed");
    mcp.accepted.add(token);
    const events = await lookupTurn(listed, { type: "static_bearer", token, mcp_server_url: mcp.url });
    expect(events.find((e) => e.type === "agent.mcp_tool_result")).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "definition of x" }],
    });
    expect(mcp.calls.at(-1)).toEqual({ tool: "lookup", args: { q: "x" }, token });
  });

  it("a holder's refresh never calls a token endpoint the allow-list does not name", async () => {
    const stale = plantedSecret("stale-holder");
    const events = await lookupTurn(listed, {
      type: "mcp_oauth",
      access_token: stale,
      mcp_server_url: mcp.url,
      // Inside the holder's expiry margin: refreshed before first use.
      expires_at: new Date(Date.now() + 5_000).toISOString(),
      refresh: {
        refresh_token: plantedSecret("refresh-holder"),
        client_id: "cid",
        token_endpoint: tokenUrl,
        token_endpoint_auth: { type: "none" },
      },
    });
    const error = events.find((e) => e.type === "session.error") as
      | { error: Record<string, unknown> }
      | undefined;
    expect(error?.error).toMatchObject({ type: "mcp_authentication_failed_error", mcp_server_name: "docs" });
    expect(String(error?.error.message)).toMatch(/the token endpoint is not allowed/);
    expect(tokenRequests).toEqual([]);
    expect(mcp.presented).not.toContain(stale);
  });
});

describe("the allow-list on the command line", () => {
  const MAIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [MAIN, ...args], {
      env: { PATH: process.env.PATH, ...env },
      encoding: "utf8",
      timeout: 15_000,
    });

  it("awaken up refuses an entry that is no host, address or CIDR range, naming it", () => {
    const result = run(
      [
        "up",
        "--port",
        "0",
        "--data-dir",
        "/nonexistent/never-created",
        "--allow-private-mcp-host",
        "10.0.0.0/8,http://x",
      ],
      {},
    );
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('--allow-private-mcp-host: allow-list entry "http://x"');
  });

  it("awaken worker refuses one from AWAKEN_ALLOW_PRIVATE_HOSTS", () => {
    const result = run(["worker", "--coordinator-url", "http://127.0.0.1:9"], {
      AWAKEN_WORKER_TOKEN: "a-worker-token-of-some-length",
      AWAKEN_ALLOW_PRIVATE_HOSTS: "10.0.0.0/40",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('AWAKEN_ALLOW_PRIVATE_HOSTS: allow-list entry "10.0.0.0/40"');
  });
});
