/**
 * Credentials on remote workers: a coordinator with no in-process workers (`--workers
 * 0`), one `awaken worker` child process, and a real MCP server (official SDK) that requires a
 * bearer. The worker's MCP connection gets the session's pinned token through the worker
 * transport's `/credentials/open`: the server sees exactly that token, an archived credential is
 * refused cleanly, a claim that is not live (wrong epoch, owner or session, settled run) gets
 * `claim_lost` with nothing opened or audited, the route needs the worker token, and neither
 * process logs the token (searched at trace level, as text and as the base64 it travels in).
 * On SQLite and on PostgreSQL (the latter skipped outside CI without AWAKEN_TEST_DATABASE_URL).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { credentialOpens } from "../support/credentialAudit.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { type SplitCluster, startSplitCluster } from "../support/splitCluster.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const KEY = "sk-awaken-remote-credentials-test";
const TOKEN = "worker-token-remote-creds-0123456789";
const OPEN_PATH = "/v1/awaken/worker/credentials/open";

const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);
const endedTurns = (events: WireEvent[]) =>
  events.filter((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");

function remoteCredentialSuite(backend: "sqlite" | "postgres" | "split") {
  let dataDir: string;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let server: ServerProcess;
  /** The split topology: Control and the coordinator as separate processes (`server` is the coordinator). */
  let cluster: SplitCluster | undefined;
  let worker: WorkerProcess;
  let identity: string;
  let mcp: BearerMcpServer;
  let environmentId: string;
  /** Every token this suite planted: none may appear in either process's output. */
  const planted: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `awaken-remote-creds-${backend}-`));
    mcp = await startBearerMcpServer();
    schema = backend === "postgres" ? await emptySchema() : undefined;
    if (backend === "split") {
      cluster = await startSplitCluster({
        dataDir,
        apiKey: KEY,
        workerToken: TOKEN,
        env: { AWAKEN_LOG_LEVEL: "trace" },
        coordinatorArgs: ["--workers", "0", "--allow-unsandboxed-tier"],
      });
      server = cluster.coordinator!;
    } else {
      server = await startServerProcess({
        dataDir,
        apiKey: KEY,
        env: { AWAKEN_WORKER_TOKEN: TOKEN, AWAKEN_LOG_LEVEL: "trace" },
        args: [
          "--workers",
          "0",
          "--allow-unsandboxed-tier",
          ...(schema ? ["--database-url", schema.url] : []),
        ],
      });
    }
    // No model key: the offline model calls `lookup` when asked to. Trace level: the most it logs.
    // The worker connects to the MCP server, on the loopback: an operator's allow-list entry.
    worker = await startWorker(server.url, TOKEN, { AWAKEN_LOG_LEVEL: "trace" }, [
      "--workspace-dir",
      join(dataDir, "worker-workspaces"),
      "--allow-unsandboxed-tier",
      "--allow-private-mcp-host",
      "127.0.0.1",
    ]);
    identity = /Awaken worker (\S+) is running/.exec(worker.stdout())![1]!;
    const environment = await server.client.beta.environments.create({
      name: "remote-mcp",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    environmentId = environment.id;
  }, 60_000);

  afterAll(async () => {
    for (const p of [worker, server]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
    await Promise.all([worker?.exited, server?.exited]);
    await cluster?.dispose();
    await mcp?.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function token(label: string): string {
    const value = `mcp-remote-${label}-${Math.random().toString(36).slice(2)}`;
    mcp.accepted.add(value);
    planted.push(value);
    return value;
  }

  async function pinnedSession(pinned: string) {
    const client = server.client;
    const agent = await client.beta.agents.create({
      name: "remote-mcp-user",
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
    const vault = await client.beta.vaults.create({ display_name: "remote" } as never);
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: pinned, mcp_server_url: mcp.url },
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      vault_ids: [vault.id],
    } as never);
    return { vault, credential, session };
  }

  const opens = (sessionId: string) =>
    // Custody's audit is Control's: in its own schema when split.
    credentialOpens({ schemaUrl: cluster?.controlSchema.url ?? schema?.url ?? null, dataDir }, sessionId);

  const openCredential = (body: unknown, authorization: string | null = `Bearer ${TOKEN}`) =>
    fetch(`${server.url}${OPEN_PATH}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(authorization === null ? {} : { authorization }),
      },
      body: JSON.stringify(body),
    });

  it("the remote worker's MCP connection presents exactly the pinned token, opened under its claim", async () => {
    const pinned = token("pinned");
    const { credential, session } = await pinnedSession(pinned);
    const before = mcp.calls.length;
    await server.client.beta.sessions.events.send(session.id, {
      events: [userMessage('call lookup {"q": "remote"}')],
    });
    const events = await waitForHistory(server.client, session.id, (h) => endedTurns(h).length >= 1, 20_000);

    expect(ofType(events, "agent.mcp_tool_result")[0]).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "definition of remote" }],
    });
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });
    expect(mcp.calls.slice(before)).toEqual([{ tool: "lookup", args: { q: "remote" }, token: pinned }]);
    expect(JSON.stringify(events)).not.toContain(pinned);
    // Audited under the remote worker's claim (not an in-process worker: there is none).
    const audit = await opens(session.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      credential_id: credential.id,
      revision: 1,
      holder: "mcp_connection",
      outcome: "opened",
      reason: null,
    });
    expect(audit[0]!.owner.startsWith(`${identity}/`)).toBe(true);
  }, 40_000);

  it("an archived credential is refused at admission: mcp_authentication_failed_error, clean idle", async () => {
    const archived = token("archived");
    const { vault, credential, session } = await pinnedSession(archived);
    await server.client.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });
    const presentedBefore = mcp.presented.length;

    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
    const events = await waitForHistory(server.client, session.id, (h) => endedTurns(h).length >= 1, 20_000);
    const error = ofType(events, "session.error")[0] as { error: Record<string, unknown> } | undefined;
    expect(error?.error).toMatchObject({
      type: "mcp_authentication_failed_error",
      mcp_server_name: "docs",
      retry_status: { type: "exhausted" },
    });
    expect(String(error?.error.message)).toContain("archived");
    expect(stopReason(events.at(-1))).toEqual({ type: "retries_exhausted" });
    expect((await server.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
    expect(mcp.presented.slice(presentedBefore)).not.toContain(archived);
    expect(await opens(session.id)).toMatchObject([{ outcome: "refused", credential_id: credential.id }]);
  }, 40_000);

  it("a claim that is not live is refused as claim_lost; nothing is opened or audited", async () => {
    const pinned = token("live");
    const other = await pinnedSession(token("other"));
    const { session } = await pinnedSession(pinned);
    // Hold the worker inside the MCP call: its claim on the run stays live meanwhile.
    mcp.hold = true;
    try {
      const before = mcp.calls.length;
      await server.client.beta.sessions.events.send(session.id, {
        events: [userMessage('call lookup {"q": "held"}')],
      });
      const deadline = Date.now() + 20_000;
      while (mcp.calls.length === before) {
        if (Date.now() > deadline) throw new Error("the remote worker never called the MCP server");
        await new Promise((r) => setTimeout(r, 25));
      }
      const [claim] = await opens(session.id);
      expect(claim).toMatchObject({ outcome: "opened" });
      const request = {
        workspaceId: claim!.workspace_id,
        sessionId: session.id,
        runId: claim!.run_id,
        owner: claim!.owner,
        epoch: claim!.epoch,
        holder: "mcp_connection",
        mcpServerUrl: mcp.url,
      };
      const refusals = [
        { ...request, epoch: request.epoch + 1 },
        { ...request, owner: "intruder/0" },
        { ...request, owner: `${request.owner}x` },
        // A live claim, presented for another session's credential.
        { ...request, sessionId: other.session.id },
        { ...request, runId: "run_does_not_exist" },
      ];
      for (const body of refusals) {
        const response = await openCredential(body);
        expect(response.status).toBe(200);
        const answer = (await response.json()) as Record<string, unknown>;
        expect(answer).toMatchObject({ kind: "claim_lost" });
        expect(Object.keys(answer).sort()).toEqual(["kind", "reason"]);
      }
      expect(await opens(session.id)).toHaveLength(1);
      expect(await opens(other.session.id)).toEqual([]);

      // Control: the same request with the live claim opens the pin (and is audited as such).
      const opened = await openCredential(request);
      const answer = (await opened.json()) as { kind: string; token: string };
      expect(answer.kind).toBe("bearer");
      expect(Buffer.from(answer.token, "base64").toString("utf8")).toBe(pinned);
      expect(await opens(session.id)).toMatchObject([
        { outcome: "opened", owner: request.owner },
        { outcome: "opened", owner: request.owner, epoch: request.epoch },
      ]);
    } finally {
      mcp.release();
    }
    const events = await waitForHistory(server.client, session.id, (h) => endedTurns(h).length >= 1, 20_000);
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });

    // The run settled: its claim is not live any more.
    const [settled] = await opens(session.id);
    const late = await openCredential({
      workspaceId: settled!.workspace_id,
      sessionId: session.id,
      runId: settled!.run_id,
      owner: settled!.owner,
      epoch: settled!.epoch,
      holder: "mcp_connection",
      mcpServerUrl: mcp.url,
    });
    expect(await late.json()).toMatchObject({ kind: "claim_lost" });
    expect(await opens(session.id)).toHaveLength(2);
  }, 60_000);

  it("the route needs the worker token (401 without it, with another or with an API key) and a valid body", async () => {
    const body = {
      workspaceId: "wrk_x",
      sessionId: "sesn_x",
      runId: "run_x",
      owner: "w/0",
      epoch: 1,
      holder: "mcp_connection",
      mcpServerUrl: mcp.url,
    };
    expect((await openCredential(body, null)).status).toBe(401);
    expect((await openCredential(body, "Bearer wrong-token-0123456789abc")).status).toBe(401);
    expect((await openCredential(body, `Bearer ${KEY}`)).status).toBe(401);
    expect((await openCredential({ ...body, holder: "sandbox" })).status).toBe(400);
    expect((await openCredential({ ...body, credentialId: "vcrd_pick_my_own" })).status).toBe(400);
    const { mcpServerUrl: _, ...withoutUse } = body;
    expect((await openCredential(withoutUse)).status).toBe(400);
  });

  it("neither the worker's nor the server's log holds a token, as text or as base64", () => {
    const control = cluster ? [cluster.control.stdout(), cluster.control.stderr()] : [];
    const logs = [server.stdout(), server.stderr(), worker.stdout(), worker.stderr(), ...control].join("\n");
    // The logs are real (trace level), so an absence means something.
    expect(worker.stderr()).toMatch(/run slice ended/);
    expect(planted.length).toBeGreaterThan(3);
    for (const secret of planted) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(Buffer.from(secret, "utf8").toString("base64"));
    }
  });
}

describe("remote worker credentials on SQLite", () => remoteCredentialSuite("sqlite"));
describe.skipIf(postgresUnavailable() !== null)("remote worker credentials on PostgreSQL", () =>
  remoteCredentialSuite("postgres"),
);
// Custody is Control's: the coordinator checks the claim, Control admits, opens and audits.
describe.skipIf(postgresUnavailable() !== null)(
  "remote worker credentials on the split topology (control + coordinator on PostgreSQL)",
  () => remoteCredentialSuite("split"),
);
