/**
 * `mcp_oauth_validate` as a live probe (wire §5 CredentialValidation), through the official SDK
 * (`client.beta.vaults.credentials.mcpOAuthValidate`) against a real MCP server made with the
 * official MCP SDK that requires a bearer, a local OAuth token endpoint, and hand-written servers for
 * the answers a real server would not give (echoes, redirects, errors, silence).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialValidator } from "../../src/control/credentialValidation.js";
import type { CredentialOpenRecord, CredentialView } from "../../src/control/vaultPorts.js";
import { systemClock } from "../../src/kernel/clock.js";
import { OutboundConnector } from "../../src/kernel/outboundConnector.js";
import { OutboundPolicy } from "../../src/kernel/outboundPolicy.js";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { RFC3339 } from "../support/sdkHelpers.js";
import { LOOPBACK } from "../support/testServer.js";
import { plantedSecret, startVaultTestServer, type VaultTestServer } from "../support/vaultServer.js";

let t: VaultTestServer;
let mcp: BearerMcpServer;
const servers: Server[] = [];

beforeAll(async () => {
  // The MCP server, token endpoints and hand-written servers below all listen on the loopback.
  t = await startVaultTestServer({ allowPrivateHosts: LOOPBACK });
  mcp = await startBearerMcpServer();
});
afterAll(async () => {
  await t.close();
  await mcp.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A local HTTP server (closed after the file); `handler` gets the request body as text. */
async function localServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<{ url: string; requests: Array<{ method: string; authorization: string; body: string }> }> {
  const requests: Array<{ method: string; authorization: string; body: string }> = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      requests.push({ method: req.method ?? "", authorization: req.headers.authorization ?? "", body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** A port nothing listens on (bound, then closed). */
async function closedPortUrl(path: string): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}${path}`;
}

async function vault() {
  return t.client.beta.vaults.create({ display_name: "validation" });
}

async function bearer(token: string, url = mcp.url) {
  const v = await vault();
  const credential = await t.client.beta.vaults.credentials.create(v.id, {
    auth: { type: "static_bearer", token, mcp_server_url: url },
  });
  return { vault: v, credential };
}

async function oauth(
  accessToken: string,
  refresh: null | { refreshToken: string; tokenEndpoint: string; clientSecret?: string },
  url = mcp.url,
) {
  const v = await vault();
  const credential = await t.client.beta.vaults.credentials.create(v.id, {
    auth: {
      type: "mcp_oauth",
      access_token: accessToken,
      mcp_server_url: url,
      ...(refresh
        ? {
            refresh: {
              refresh_token: refresh.refreshToken,
              client_id: "cid",
              token_endpoint: refresh.tokenEndpoint,
              token_endpoint_auth: refresh.clientSecret
                ? { type: "client_secret_post" as const, client_secret: refresh.clientSecret }
                : { type: "none" as const },
            },
          }
        : {}),
    },
  });
  return { vault: v, credential };
}

function validate(credential: { id: string }, v: { id: string }) {
  return t.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: v.id });
}

function auditOf(credentialId: string) {
  return t.sql
    .prepare(
      "select session_id, run_id, owner, revision, holder, outcome, reason, refreshed_to from credential_opens where credential_id = ? order by created_at, id",
    )
    .all(credentialId) as Array<Record<string, unknown>>;
}

describe("mcp_oauth_validate: a live MCP initialize probe", () => {
  it("a token the server accepts is valid (static_bearer), audited as a validation_probe open", async () => {
    const token = plantedSecret("valid-bearer");
    mcp.accepted.add(token);
    const { vault: v, credential } = await bearer(token);
    const before = mcp.presented.length;
    const validation = await validate(credential, v);
    expect(validation).toEqual({
      type: "vault_credential_validation",
      credential_id: credential.id,
      vault_id: v.id,
      status: "valid",
      has_refresh_token: false,
      mcp_probe: null,
      refresh: null,
      validated_at: expect.stringMatching(RFC3339),
    });
    // The initialize POST carried the token (and the probe closed its MCP session after it).
    expect(mcp.presented.slice(before)[0]).toBe(token);
    expect(auditOf(credential.id)).toEqual([
      {
        session_id: "",
        run_id: "",
        owner: "control",
        revision: 1,
        holder: "validation_probe",
        outcome: "opened",
        reason: null,
        refreshed_to: null,
      },
    ]);
    expect(JSON.stringify(auditOf(credential.id))).not.toContain(token);
  });

  it("a token the server refuses, with no refresh, is invalid: the 401 is reported, no refresh was tried", async () => {
    const { vault: v, credential } = await bearer(plantedSecret("wrong-bearer"));
    const validation = await validate(credential, v);
    expect(validation).toMatchObject({
      status: "invalid",
      has_refresh_token: false,
      mcp_probe: {
        method: "initialize",
        http_response: { status_code: 401, content_type: "", body: "", body_truncated: false },
      },
      refresh: null,
    });

    const o = await oauth(plantedSecret("wrong-access"), null);
    expect(await validate(o.credential, o.vault)).toMatchObject({
      status: "invalid",
      has_refresh_token: false,
      mcp_probe: { method: "initialize", http_response: { status_code: 401 } },
      refresh: { status: "no_refresh_token", http_response: null },
    });
  });

  it("a refused mcp_oauth token is refreshed at the token endpoint, committed as the next revision, and probed again: valid", async () => {
    const stale = plantedSecret("stale");
    const fresh = plantedSecret("fresh");
    const refreshToken = plantedSecret("refresh");
    const rotatedRefresh = plantedSecret("refresh-rotated");
    const clientSecret = plantedSecret("client-secret");
    mcp.accepted.add(fresh);
    const endpoint = await localServer((_req, res, body) => {
      const form = Object.fromEntries(new URLSearchParams(body));
      const ok =
        form.grant_type === "refresh_token" &&
        form.refresh_token === refreshToken &&
        form.client_id === "cid" &&
        form.client_secret === clientSecret;
      res.writeHead(ok ? 200 : 400, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          ok
            ? { access_token: fresh, token_type: "Bearer", expires_in: 3600, refresh_token: rotatedRefresh }
            : { error: "invalid_grant" },
        ),
      );
    });
    const { vault: v, credential } = await oauth(stale, {
      refreshToken,
      tokenEndpoint: `${endpoint.url}/token`,
      clientSecret,
    });
    const before = mcp.presented.length;
    const validation = await validate(credential, v);
    expect(validation).toMatchObject({
      status: "valid",
      has_refresh_token: true,
      mcp_probe: null,
      refresh: { status: "succeeded", http_response: null },
    });
    expect(endpoint.requests).toHaveLength(1);
    expect(mcp.presented.slice(before)).toEqual(expect.arrayContaining([stale, fresh]));

    // Committed through vault ingress as revision 2 (sealed), like a holder's refresh.
    const revisions = t.revisions(credential.id);
    expect(revisions.map((r) => r.revision)).toEqual([1, 2]);
    expect(await t.openRevision(revisions[1]!)).toEqual({
      access_token: fresh,
      refresh_token: rotatedRefresh,
      client_secret: clientSecret,
    });
    const retrieved = await t.client.beta.vaults.credentials.retrieve(credential.id, { vault_id: v.id });
    expect((retrieved.auth as { expires_at: string | null }).expires_at).toMatch(RFC3339);
    expect(auditOf(credential.id)).toMatchObject([
      { holder: "validation_probe", outcome: "opened", revision: 1 },
      { holder: "validation_probe", outcome: "refreshed", revision: 1, refreshed_to: 2 },
      { holder: "validation_probe", outcome: "opened", revision: 2 },
    ]);

    // Validating again uses revision 2 straight away.
    expect(await validate(credential, v)).toMatchObject({ status: "valid", refresh: null });
    expect(endpoint.requests).toHaveLength(1);
    const responses = t.bodies.join("\n");
    for (const value of [stale, fresh, refreshToken, rotatedRefresh, clientSecret]) {
      expect(responses).not.toContain(value);
    }
  });

  it("a refresh the token endpoint refuses is invalid, with its answer scrubbed of what it was sent", async () => {
    const stale = plantedSecret("stale-2");
    const refreshToken = plantedSecret("refresh-2");
    const clientSecret = plantedSecret("client-2");
    const endpoint = await localServer((_req, res, body) => {
      // A careless endpoint that echoes the whole form back in its error description.
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "invalid_grant", error_description: `bad grant: ${body}`, stale }));
    });
    const { vault: v, credential } = await oauth(stale, {
      refreshToken,
      tokenEndpoint: `${endpoint.url}/token`,
      clientSecret,
    });
    const validation = await validate(credential, v);
    expect(validation).toMatchObject({
      status: "invalid",
      has_refresh_token: true,
      mcp_probe: { method: "initialize", http_response: { status_code: 401 } },
      refresh: {
        status: "failed",
        http_response: { status_code: 400, content_type: "application/json", body_truncated: false },
      },
    });
    const body = validation.refresh?.http_response?.body ?? "";
    expect(body).toContain("invalid_grant");
    expect(body).toContain("[redacted]");
    for (const value of [stale, refreshToken, clientSecret, encodeURIComponent(refreshToken)]) {
      expect(body).not.toContain(value);
    }
    expect(t.revisions(credential.id)).toHaveLength(1);
    expect(auditOf(credential.id)).toMatchObject([
      { outcome: "opened", revision: 1 },
      { outcome: "refused", revision: 1, reason: expect.stringContaining("HTTP 400 (invalid_grant)") },
    ]);
  });

  it("an archived credential or vault is probed but never refreshed (it takes no new revision)", async () => {
    const endpoint = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: plantedSecret("unused"), expires_in: 60 }));
    });
    const refresh = { refreshToken: plantedSecret("r-archived"), tokenEndpoint: `${endpoint.url}/token` };
    const a = await oauth(plantedSecret("archived-cred"), refresh);
    await t.client.beta.vaults.credentials.archive(a.credential.id, { vault_id: a.vault.id });
    expect(await validate(a.credential, a.vault)).toMatchObject({
      status: "invalid",
      mcp_probe: { method: "initialize", http_response: { status_code: 401 } },
      refresh: null,
    });
    const b = await oauth(plantedSecret("archived-vault"), refresh);
    await t.client.beta.vaults.archive(b.vault.id);
    expect(await validate(b.credential, b.vault)).toMatchObject({ status: "invalid", refresh: null });
    expect(endpoint.requests).toHaveLength(0);
    expect(t.revisions(a.credential.id)).toHaveLength(1);
  });

  it("a token endpoint that cannot be reached leaves it unknown (connect_error)", async () => {
    const { vault: v, credential } = await oauth(plantedSecret("stale-3"), {
      refreshToken: plantedSecret("refresh-3"),
      tokenEndpoint: await closedPortUrl("/token"),
    });
    expect(await validate(credential, v)).toMatchObject({
      status: "unknown",
      has_refresh_token: true,
      mcp_probe: { method: "initialize", http_response: { status_code: 401 } },
      refresh: { status: "connect_error", http_response: null },
    });
    expect(t.revisions(credential.id)).toHaveLength(1);
  });

  it("an MCP server that is down is unknown: the probe failed at initialize with no HTTP answer", async () => {
    const { vault: v, credential } = await oauth(plantedSecret("down"), {
      refreshToken: plantedSecret("refresh-down"),
      tokenEndpoint: await closedPortUrl("/token"),
    });
    const down = await closedPortUrl("/mcp");
    const b = await bearer(plantedSecret("down-bearer"), down);
    expect(await validate(b.credential, b.vault)).toMatchObject({
      status: "unknown",
      mcp_probe: { method: "initialize", http_response: null },
      refresh: null,
    });
    // The oauth one points at the live server with a refused token but a dead endpoint: unknown too.
    expect((await validate(credential, v)).status).toBe("unknown");
  });

  it("bodies are scrubbed of the token in every form and cut at 4 KiB", async () => {
    const token = plantedSecret("echoed");
    const server = await localServer((req, res) => {
      const presented = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
      res.writeHead(401, { "content-type": "text/plain; charset=utf-8" });
      res.end(
        `raw=${presented} json=${JSON.stringify(presented)} url=${encodeURIComponent(presented)} ` +
          `b64=${Buffer.from(presented).toString("base64")} header=${req.headers.authorization} ` +
          `${"é".repeat(5_000)} tail=${presented}`,
      );
    });
    const { vault: v, credential } = await bearer(token, `${server.url}/mcp`);
    const validation = await validate(credential, v);
    expect(validation.status).toBe("invalid");
    const response = validation.mcp_probe?.http_response;
    expect(response).toMatchObject({
      status_code: 401,
      content_type: "text/plain; charset=utf-8",
      body_truncated: true,
    });
    const body = response?.body ?? "";
    const head = 'raw=[redacted] json="[redacted]" url=[redacted] b64=[redacted] header=Bearer [redacted] éé';
    expect(body.slice(0, head.length)).toBe(head);
    expect(Buffer.byteLength(body, "utf8")).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(body, "utf8")).toBeGreaterThan(4000);
    expect(body).not.toContain("\uFFFD");
    expect(body).not.toContain(token);
    expect(t.bodies.join("\n")).not.toContain(token);
    expect(t.logs.join("")).not.toContain(token);
  });

  it("redirects are not followed (the bearer goes nowhere else) and other answers are unknown", async () => {
    const token = plantedSecret("redirected");
    const elsewhere = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    const redirecting = await localServer((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/mcp` }).end();
    });
    const r = await bearer(token, `${redirecting.url}/mcp`);
    expect(await validate(r.credential, r.vault)).toMatchObject({
      status: "unknown",
      mcp_probe: { method: "initialize", http_response: { status_code: 307 } },
    });
    expect(elsewhere.requests).toHaveLength(0);

    const failing = await localServer((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "boom" }));
    });
    const f = await bearer(plantedSecret("five-hundred"), `${failing.url}/mcp`);
    expect(await validate(f.credential, f.vault)).toMatchObject({
      status: "unknown",
      mcp_probe: {
        method: "initialize",
        http_response: { status_code: 500, body: '{"error":"boom"}', body_truncated: false },
      },
      refresh: null,
    });

    // A 200 that is no MCP answer (a web page at that URL) does not prove the credential works.
    const page = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>hello</html>");
    });
    const p = await bearer(plantedSecret("page"), `${page.url}/mcp`);
    expect(await validate(p.credential, p.vault)).toMatchObject({
      status: "unknown",
      mcp_probe: {
        http_response: { status_code: 200, content_type: "text/html", body: "<html>hello</html>" },
      },
    });

    // A plain JSON initialize answer (no SSE) is a valid one.
    const json = await localServer((_req, res, body) => {
      const request = JSON.parse(body) as { id: number };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: request.id,
          result: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            serverInfo: { name: "j", version: "1" },
          },
        }),
      );
    });
    const j = await bearer(plantedSecret("json"), `${json.url}/mcp`);
    expect(await validate(j.credential, j.vault)).toMatchObject({ status: "valid", mcp_probe: null });
    expect(json.requests[0]?.body).toContain('"method":"initialize"');
  });

  it("environment_variable credentials cannot be validated (400)", async () => {
    const v = await vault();
    const env = await t.client.beta.vaults.credentials.create(v.id, {
      auth: {
        type: "environment_variable",
        secret_name: "K",
        secret_value: "v",
        networking: { type: "unrestricted" },
      },
    });
    await expect(validate(env, v)).rejects.toMatchObject({ status: 400 });
  });
});

describe("CredentialValidator timeouts", () => {
  it("a server that never answers is unknown after the timeout", async () => {
    const silent = await localServer(() => {
      // never answers
    });
    const opens: CredentialOpenRecord[] = [];
    const view = {
      head: {
        id: "vcrd_x",
        workspaceId: "ws",
        vaultId: "vlt_x",
        displayName: null,
        metadata: {},
        authType: "static_bearer",
        usageKey: `mcp:${silent.url}/mcp`,
        latestRevision: 1,
        createdAt: 0,
        updatedAt: 0,
        archivedAt: null,
      },
      revision: {
        workspaceId: "ws",
        credentialId: "vcrd_x",
        revision: 1,
        auth: { type: "static_bearer", mcp_server_url: `${silent.url}/mcp` },
        secretFields: ["token"],
        sealed: { format: 1, masterKeyId: "k", wrappedKey: Buffer.alloc(0), ciphertext: Buffer.alloc(0) },
        createdAt: 0,
      },
    } satisfies CredentialView;
    const validator = new CredentialValidator({} as never, {
      opener: { openField: async () => Buffer.from("tok", "utf8") },
      audit: {
        record: async (entry) => {
          opens.push(entry);
        },
        listForSession: async () => [],
        list: async () => ({ data: [], nextCursor: null }),
        refreshedFrom: async () => null,
      },
      clock: systemClock,
      rotate: async () => {
        throw new Error("not called");
      },
      timeoutMs: 300,
      outbound: new OutboundConnector({ policy: OutboundPolicy.allowing(LOOPBACK) }),
    });
    const started = Date.now();
    const validation = await validator.validate(view);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(validation).toMatchObject({
      status: "unknown",
      mcpProbe: { method: "initialize", httpResponse: null },
      refresh: null,
    });
    expect(silent.requests).toHaveLength(1); // the request arrived; no answer ever did
    expect(opens.map((o) => o.outcome)).toEqual(["opened"]);
  });
});
