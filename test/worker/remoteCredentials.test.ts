/**
 * The remote worker's `credentials` port over the worker transport, against a real coordinator in
 * this process (no MCP server is needed: opening happens before connecting). The bearer comes back
 * as the pinned bytes in a Buffer; a session with no pin for a server gets `none`; a claim the
 * coordinator finds lost throws and aborts that run through the transport's cancel listeners, so
 * the worker loop ends the slice as a lost claim, not as a crash. The same for the sandbox's
 * `environment_variable` credentials: the secret-free list of pinned variables, and the secret as
 * bytes for the egress proxy.
 */
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/cli/allInOne.js";
import type { CredentialOpenRequest, SecretOpenRequest } from "../../src/coordinator/ports.js";
import { systemClock } from "../../src/kernel/clock.js";
import { OutboundConnector } from "../../src/kernel/outboundConnector.js";
import { OutboundPolicy } from "../../src/kernel/outboundPolicy.js";
import { createProviderRouter } from "../../src/providers/router.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import { createSandboxes } from "../../src/sandbox/sandboxes.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import { CredentialClaimLost, RemoteCredentialHolder } from "../../src/worker/remoteCredentials.js";
import { Worker } from "../../src/worker/workerLoop.js";
import { MODEL, sleep, userMessage } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";

const TOKEN = "worker-token-remote-credentials-unit";
const MCP_URL = "http://127.0.0.1:9/mcp";
const silent = { info: () => {}, warn: () => {} };

let testServer: TestServer;
let server: RunningServer;
let dataDir: string;
let client: Anthropic;
let transport: HttpWorkerTransport;

beforeEach(async () => {
  testServer = await startTestServer({
    workers: 0,
    leaseMs: 15_000,
    workerToken: TOKEN,
    // Its environments run on tier "none": the operator option enables it (here and on the worker).
    allowWeakerTiers: true,
  });
  ({ server, client, dataDir } = testServer);
  transport = new HttpWorkerTransport({ baseUrl: server.url, token: TOKEN, log: silent, claimWaitMs: 0 });
});
afterEach(async () => {
  await testServer.close();
});

/** A session pinned to a static_bearer for MCP_URL, with a queued run. */
async function pinnedRun(secret: string) {
  const environment = await client.beta.environments.create({
    name: "creds",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  const agent = await client.beta.agents.create({
    name: "remote-holder",
    model: MODEL,
    mcp_servers: [{ name: "docs", type: "url", url: MCP_URL }],
    tools: [{ type: "mcp_toolset", mcp_server_name: "docs" }],
  } as never);
  const vault = await client.beta.vaults.create({ display_name: "v" } as never);
  await client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token: secret, mcp_server_url: MCP_URL },
  } as never);
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    vault_ids: [vault.id],
  } as never);
  await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
  return session;
}

describe("RemoteCredentialHolder over HttpWorkerTransport", () => {
  it("opens the pinned bytes, answers none without a pin, and reports a lost claim", async () => {
    const secret = `remote-unit-${Math.random().toString(36).slice(2)}`;
    await pinnedRun(secret);
    const a = await transport.claim("unit/0", 0);
    if (!a) throw new Error("no run to claim");
    const cancelled: string[] = [];
    transport.onRunCancelled((runId) => cancelled.push(runId));
    const holder = new RemoteCredentialHolder(transport);
    const request: CredentialOpenRequest = {
      workspaceId: a.workspaceId,
      sessionId: a.sessionId,
      runId: a.runId,
      owner: a.owner,
      epoch: a.epoch,
      holder: "mcp_connection",
      mcpServerUrl: MCP_URL,
    };

    const opening = await holder.open(request);
    if (opening.kind !== "bearer") throw new Error(`expected a bearer, got ${opening.kind}`);
    expect(Buffer.isBuffer(opening.token)).toBe(true);
    expect(opening.token.toString("utf8")).toBe(secret);
    expect(opening.revision).toBe(1);
    opening.token.fill(0);

    expect(await holder.open({ ...request, mcpServerUrl: "http://127.0.0.1:9/other" })).toEqual({
      kind: "none",
    });
    expect(cancelled).toEqual([]);

    const lost = holder.open({ ...request, epoch: a.epoch + 1 });
    await expect(lost).rejects.toBeInstanceOf(CredentialClaimLost);
    await expect(lost).rejects.not.toThrow(secret);
    expect(cancelled).toEqual([a.runId]);
  });

  it("lists the pinned variables secret-free and opens the secret as bytes; a lost claim throws and aborts", async () => {
    const secret = `remote-unit-env-${Math.random().toString(36).slice(2)}`;
    const environment = await client.beta.environments.create({
      name: "env-creds",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    const agent = await client.beta.agents.create({ name: "env-holder", model: MODEL } as never);
    const vault = await client.beta.vaults.create({ display_name: "env" } as never);
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "UNIT_TOKEN",
        secret_value: secret,
        networking: { type: "limited", allowed_hosts: ["api.example.com"] },
        injection_location: { header: true, body: true },
      },
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      vault_ids: [vault.id],
    } as never);
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    const a = await transport.claim("unit/0", 0);
    if (!a) throw new Error("no run to claim");
    const cancelled: string[] = [];
    transport.onRunCancelled((runId) => cancelled.push(runId));
    const holder = new RemoteCredentialHolder(transport);
    const claim = {
      workspaceId: a.workspaceId,
      sessionId: a.sessionId,
      runId: a.runId,
      owner: a.owner,
      epoch: a.epoch,
    };

    const variables = await holder.secretVariables(claim);
    expect(variables).toEqual([
      {
        credentialId: credential.id,
        vaultId: vault.id,
        revision: 1,
        secretName: "UNIT_TOKEN",
        networking: { type: "limited", allowed_hosts: ["api.example.com"] },
        injection: { header: true, body: true },
      },
    ]);
    expect(JSON.stringify(variables)).not.toContain(secret);

    const request: SecretOpenRequest = { ...claim, holder: "egress_proxy", secretName: "UNIT_TOKEN" };
    const opening = await holder.openSecret(request);
    if (opening.kind !== "secret") throw new Error(`expected a secret, got ${opening.kind}`);
    expect(Buffer.isBuffer(opening.value)).toBe(true);
    expect(opening.value.toString("utf8")).toBe(secret);
    opening.value.fill(0);
    expect(await holder.openSecret({ ...request, secretName: "NOT_PINNED" })).toEqual({ kind: "none" });
    // The stdio MCP process holder crosses the wire too; this agent's servers name no such
    // variable, so the pin's holder policy refuses it (audited, no material).
    const asProcess = await holder.openSecret({ ...request, holder: "mcp_process" });
    expect(asProcess).toMatchObject({
      kind: "refused",
      credentialId: credential.id,
      reason: "the pin's holder policy does not allow the mcp_process holder",
    });
    expect(cancelled).toEqual([]);

    const lostList = holder.secretVariables({ ...claim, epoch: a.epoch + 1 });
    await expect(lostList).rejects.toBeInstanceOf(CredentialClaimLost);
    expect(cancelled).toEqual([a.runId]);
    const lostOpen = holder.openSecret({ ...request, owner: "unit/1" });
    await expect(lostOpen).rejects.toBeInstanceOf(CredentialClaimLost);
    await expect(lostOpen).rejects.not.toThrow(secret);
    expect(cancelled).toEqual([a.runId, a.runId]);
  });

  it("a worker whose credential open finds the claim lost ends the slice as lost, not as a crash", async () => {
    await pinnedRun(`remote-unit-${Math.random().toString(36).slice(2)}`);
    // Present a claim one epoch ahead of the one held: the coordinator answers claim_lost.
    const stale = new RemoteCredentialHolder({
      openCredential: (request) => transport.openCredential({ ...request, epoch: request.epoch + 1 }),
      secretVariables: (request) => transport.secretVariables(request),
      openSecret: (request) => transport.openSecret(request),
    });
    const lines = await sliceWith(stale);
    expect(lines.find((l) => l.message === "run slice ended")?.fields).toMatchObject({
      outcome: "lost_claim",
    });
    expect(lines.some((l) => l.message.startsWith("run failed in the worker"))).toBe(false);
  });

  it("a worker whose sandbox set-up finds the claim lost (secret variables) ends the slice as lost", async () => {
    const environment = await client.beta.environments.create({
      name: "env-stale",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    const agent = await client.beta.agents.create({
      name: "env-stale",
      model: MODEL,
      tools: [
        { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
      ],
    } as never);
    const vault = await client.beta.vaults.create({ display_name: "env-stale" } as never);
    await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "STALE_TOKEN",
        secret_value: `remote-unit-${Math.random().toString(36).slice(2)}`,
        networking: { type: "unrestricted" },
        injection_location: { header: true, body: false },
      },
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      vault_ids: [vault.id],
    } as never);
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call bash {"command": "echo hi"}')],
    });
    let asked = 0;
    const stale = new RemoteCredentialHolder({
      openCredential: (request) => transport.openCredential(request),
      secretVariables: (request) => {
        asked++;
        return transport.secretVariables({ ...request, epoch: request.epoch + 1 });
      },
      openSecret: (request) => transport.openSecret(request),
    });
    const lines = await sliceWith(stale);
    expect(asked).toBe(1);
    expect(lines.find((l) => l.message === "run slice ended")?.fields).toMatchObject({
      outcome: "lost_claim",
    });
    expect(lines.some((l) => l.message.startsWith("run failed in the worker"))).toBe(false);
    // Nothing of the tool was written after the claim was lost: no result committed.
    const events = [];
    for await (const event of client.beta.sessions.events.list(session.id)) events.push(event);
    expect(events.some((e) => e.type === "agent.tool_result")).toBe(false);
  });
});

/** Runs one worker with `credentials` until its first run slice ended; returns its log lines. */
async function sliceWith(credentials: RemoteCredentialHolder) {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const log = {
    info: (fields: Record<string, unknown>, message: string) =>
      lines.push({ level: "info", fields, message }),
    warn: (fields: Record<string, unknown>, message: string) =>
      lines.push({ level: "warn", fields, message }),
  };
  const sandboxes = createSandboxes(join(dataDir, "worker-workspaces"), {}, undefined, true);
  const worker = new Worker(
    transport,
    {
      providers: createProviderRouter({}),
      sandboxes,
      clock: systemClock,
      retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 10 },
      crashBudget: 5,
      modelIdleTimeoutMs: 300_000,
      log,
      credentials,
      // MCP_URL is on the loopback: allow-listed, as an operator would list a private MCP host.
      outbound: new OutboundConnector({ policy: OutboundPolicy.allowing(LOOPBACK) }),
    },
    { id: "stale", concurrency: 1, leaseMs: 15_000, pollMs: 50, drainMs: 1_000 },
  );
  worker.start();
  try {
    const deadline = Date.now() + 10_000;
    while (!lines.some((l) => l.message === "run slice ended")) {
      if (Date.now() > deadline) throw new Error(`no slice ended: ${JSON.stringify(lines)}`);
      await sleep(25);
    }
  } finally {
    await worker.stop();
    await sandboxes.close();
  }
  return lines;
}
