/**
 * An MCP call through a tunnel, end to end: the MCP server (made with the official MCP SDK, HTTPS
 * with a certificate of a CA made here) listens on the loopback, which this server's outbound
 * policy refuses, so the direct call is refused; the connector (`awaken tunnel`, a child process)
 * can reach it, and the same agent naming the tunnel's domain gets its tool's answer through it,
 * the server's TLS checked against the tunnel's CA certificate. A route the connector does not list
 * is refused by the connector; after the tunnel is archived its connection is dropped, the
 * connector is refused, and the call fails clearly. The token is in no log and no event. The same
 * holds for a run on a remote worker, whose requests reach the relay over the worker transport.
 * An MCP server that requires mutual TLS is refused by a connector without a client certificate,
 * with a failure naming the TLS handshake, and reached by one given `--client-cert`/`--client-key`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { createTestCa } from "../support/testCa.js";
import { startTestServer, type TestServer } from "../support/testServer.js";
import { plantedSecret } from "../support/vaultServer.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

interface Connector {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string>;
}

/** Starts `awaken tunnel` as a user would, and waits until it says it is connected. */
async function startConnector(args: string[]): Promise<Connector> {
  const child = spawn(process.execPath, [ENTRY, "tunnel", ...args], {
    env: { PATH: process.env.PATH },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the connector did not connect in time:\n${output}`));
    }, 15_000);
    const check = () => {
      if (/tunnel connector: connected to/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the connector exited (${code}) before connecting:\n${output}`));
    });
  });
  return { child, output: () => output, exited };
}

const TOPOLOGIES = ["SQLite", "PostgreSQL", "a remote worker"] as const;
const WORKER_TOKEN = "worker-token-tunnel-relay-0123456789";

describe.each(TOPOLOGIES)("an MCP call through a tunnel on %s", (topology) => {
  const backend = topology === "PostgreSQL" ? "PostgreSQL" : "SQLite";
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;
  /** The remote topology: runs are held by an `awaken worker` process, which reaches the relay over its transport. */
  let worker: WorkerProcess | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let caPem = "";
  let ca!: Awaited<ReturnType<typeof createTestCa>>;
  let t!: TestServer;
  let mcp!: BearerMcpServer;
  let connector: Connector | undefined;
  let scratch = "";
  let logs = "";
  let environmentId: string;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    scratch = mkdtempSync(join(tmpdir(), "tunnel-"));
    ca = await createTestCa();
    mcp = await startBearerMcpServer({ tls: { ...(await ca.issueServer("localhost")), host: "localhost" } });
    caPem = ca.pem;
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logs += chunk;
        done();
      },
    });
    // No allow-list: the loopback the MCP server listens on is refused to direct connections.
    t = await startTestServer({
      workers: 1,
      workerPollMs: 50,
      allowWeakerTiers: true,
      logger: pino({ level: "debug" }, sink),
      ...(schema ? { databaseUrl: schema.url } : {}),
      ...(topology === "a remote worker" ? { workers: 0, workerToken: WORKER_TOKEN } : {}),
    });
    // Its own outbound policy refuses the loopback too: no allow-list entry.
    if (topology === "a remote worker") {
      worker = await startWorker(t.server.url, WORKER_TOKEN, {}, [
        "--workspace-dir",
        join(scratch, "worker-workspaces"),
        "--allow-unsandboxed-tier",
      ]);
    }
    const environment = await t.client.beta.environments.create({
      name: "tunnel",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    environmentId = environment.id;
  });
  afterAll(async () => {
    connector?.child.kill("SIGKILL");
    await connector?.exited;
    worker?.child.kill("SIGTERM");
    await worker?.exited;
    await t?.close();
    await mcp?.close();
    await schema?.drop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  const endedTurns = (events: WireEvent[]) =>
    events.filter((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");

  /** An agent whose one MCP server is `url`, its bearer pinned from a vault; one `lookup` turn. */
  async function lookupTurn(url: string, token: string): Promise<WireEvent[]> {
    const client = t.client;
    const agent = await client.beta.agents.create({
      name: "tunnel-user",
      model: MODEL,
      mcp_servers: [{ name: "docs", type: "url", url }],
      tools: [
        {
          type: "mcp_toolset",
          mcp_server_name: "docs",
          default_config: { permission_policy: { type: "always_allow" } },
        },
      ],
    } as never);
    const vault = await client.beta.vaults.create({ display_name: "tunnel" } as never);
    await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token, mcp_server_url: url },
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      vault_ids: [vault.id],
    } as never);
    await client.beta.sessions.events.send(session.id, { events: [userMessage('call lookup {"q": "x"}')] });
    return waitForHistory(client, session.id, (h) => endedTurns(h).length >= 1, 20_000);
  }

  const sessionError = (events: WireEvent[]) =>
    (events.find((e) => e.type === "session.error") as { error: Record<string, unknown> } | undefined)?.error;

  it("the direct call is refused; through the tunnel it works; a route not listed and an archived tunnel are refused", async () => {
    const bearer = plantedSecret("tunnel-mcp");
    mcp.accepted.add(bearer);

    // Direct: the policy refuses the loopback; the MCP server hears nothing.
    const presented = mcp.presented.length;
    const direct = await lookupTurn(mcp.url, bearer);
    expect(sessionError(direct)).toMatchObject({
      type: "mcp_connection_failed_error",
      mcp_server_name: "docs",
    });
    expect(String(sessionError(direct)?.message)).toMatch(/loopback, link-local, private or reserved/);
    expect(mcp.presented.length).toBe(presented);

    const tunnel = await t.client.beta.tunnels.create({ display_name: "lab" });
    const viaTunnel = `https://docs.${tunnel.domain}/mcp`;

    // No CA certificate yet: the tunnel carries nothing (SDK), and says so.
    const { tunnel_token: token } = await t.client.beta.tunnels.revealToken(tunnel.id);
    const tokenFile = join(scratch, "token");
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const port = new URL(mcp.url).port;
    connector = await startConnector([
      "--coordinator-url",
      t.server.url,
      "--token-file",
      tokenFile,
      "--route",
      `docs=https://localhost:${port}`,
    ]);
    const uncertified = await lookupTurn(viaTunnel, bearer);
    expect(String(sessionError(uncertified)?.message)).toMatch(/has no CA certificate/);
    expect(mcp.presented.length).toBe(presented);

    // A certificate of another CA: the connector refuses the MCP server's TLS.
    const other = await createTestCa({ name: "another CA" });
    const wrong = await t.client.beta.tunnels.certificates.create(tunnel.id, {
      ca_certificate_pem: other.pem,
    });
    const untrusted = await lookupTurn(viaTunnel, bearer);
    expect(sessionError(untrusted)).toMatchObject({ type: "mcp_connection_failed_error" });
    expect(String(sessionError(untrusted)?.message)).toMatch(/certificate/i);
    expect(mcp.presented.length).toBe(presented);

    // The right CA: the call goes through the tunnel and reaches the server with the pinned bearer.
    await t.client.beta.tunnels.certificates.create(tunnel.id, {
      ca_certificate_pem: caPem,
    });
    await t.client.beta.tunnels.certificates.archive(wrong.id, { tunnel_id: tunnel.id });
    const tunnelled = await lookupTurn(viaTunnel, bearer);
    expect(tunnelled.find((e) => e.type === "agent.mcp_tool_result")).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "definition of x" }],
    });
    expect(mcp.calls.at(-1)).toEqual({ tool: "lookup", args: { q: "x" }, token: bearer });

    // A route the connector does not list: refused there, never dialled.
    const calls = mcp.calls.length;
    const unlisted = await lookupTurn(`https://admin.${tunnel.domain}/mcp`, bearer);
    expect(String(sessionError(unlisted)?.message)).toMatch(
      /route "admin" is not on this connector's allow-list/,
    );
    expect(mcp.calls.length).toBe(calls);

    // Archived: the live connection is dropped, the connector is refused and stops (exit 2).
    await t.client.beta.tunnels.archive(tunnel.id);
    expect(await connector.exited).toBe(2);
    expect(connector.output()).toMatch(/refused the tunnel token/);
    const archived = await lookupTurn(viaTunnel, bearer);
    expect(sessionError(archived)).toMatchObject({
      type: "mcp_connection_failed_error",
      mcp_server_name: "docs",
    });
    expect(String(sessionError(archived)?.message)).toMatch(new RegExp(`tunnel ${tunnel.id} is archived`));
    expect(mcp.calls.length).toBe(calls);

    // The token: in no log line of the server, nothing the connector printed, no event.
    expect(logs).toMatch(/tunnel connector connected/);
    for (const text of [
      logs,
      connector.output(),
      worker?.stdout() ?? "",
      worker?.stderr() ?? "",
      JSON.stringify([direct, tunnelled, unlisted, archived]),
    ]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(bearer);
    }
  });

  it("an MCP server that requires a client certificate: refused without --client-cert (the TLS handshake named), reached with it", async () => {
    const clientCa = await createTestCa({ name: "Awaken test client CA" });
    const mutual = await startBearerMcpServer({
      tls: { ...(await ca.issueServer("localhost")), host: "localhost", clientCa: clientCa.pem },
    });
    let plain: Connector | undefined;
    let identified: Connector | undefined;
    try {
      const bearer = plantedSecret("tunnel-mtls");
      mutual.accepted.add(bearer);
      const tunnel = await t.client.beta.tunnels.create({ display_name: "mtls" });
      await t.client.beta.tunnels.certificates.create(tunnel.id, { ca_certificate_pem: caPem });
      const { tunnel_token: token } = await t.client.beta.tunnels.revealToken(tunnel.id);
      const tokenFile = join(scratch, "mtls-token");
      writeFileSync(tokenFile, token, { mode: 0o600 });
      const route = `docs=https://localhost:${new URL(mutual.url).port}`;
      const viaTunnel = `https://docs.${tunnel.domain}/mcp`;
      const base = ["--coordinator-url", t.server.url, "--token-file", tokenFile, "--route", route];

      // No client certificate: the server ends the handshake; the failure says so, and how to fix it.
      plain = await startConnector(base);
      const refused = await lookupTurn(viaTunnel, bearer);
      expect(sessionError(refused)).toMatchObject({ type: "mcp_connection_failed_error" });
      expect(String(sessionError(refused)?.message)).toMatch(
        /TLS handshake with the MCP server failed: it requires a client certificate.*--client-cert/,
      );
      expect(mutual.presented).toEqual([]);
      plain.child.kill("SIGTERM");
      await plain.exited;

      // With the private network's client identity: the tool call works.
      const client = await clientCa.issueClient("awaken-connector");
      const certFile = join(scratch, "client.crt");
      const keyFile = join(scratch, "client.key");
      writeFileSync(certFile, client.cert);
      writeFileSync(keyFile, client.key, { mode: 0o600 });
      identified = await startConnector([...base, "--client-cert", certFile, "--client-key", keyFile]);
      const reached = await lookupTurn(viaTunnel, bearer);
      expect(reached.find((e) => e.type === "agent.mcp_tool_result")).toMatchObject({
        is_error: false,
        content: [{ type: "text", text: "definition of x" }],
      });
      expect(mutual.calls.at(-1)).toEqual({ tool: "lookup", args: { q: "x" }, token: bearer });

      // The client key stays with the connector: in no server log, connector output or event.
      const keyBody = client.key.split("\n")[1] ?? "";
      expect(keyBody.length).toBeGreaterThan(20);
      for (const text of [logs, plain.output(), identified.output(), JSON.stringify([refused, reached])]) {
        expect(text).not.toContain(keyBody);
        expect(text).not.toContain(token);
      }
    } finally {
      for (const c of [plain, identified]) {
        c?.child.kill("SIGKILL");
        await c?.exited;
      }
      await mutual.close();
    }
  });
});
