/**
 * MCP calls and worker crashes: an MCP call has the Hand tools' intent/result discipline.
 * A call cut off by kill -9 is run again by the restarted server only when the MCP server annotates
 * the tool `idempotentHint: true`; otherwise the model is told its outcome is unknown and the server
 * is not called twice.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { isEndTurnIdle, MODEL, sleep, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const KEY = "sk-awaken-mcp-crash-test";
let dataDir: string;
let fake: FakeModelServer;
let mcp: BearerMcpServer;
let running: ServerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-mcp-crash-"));
  fake = await startFakeAnthropic();
  fake.setFallback({ kind: "text", text: "done" });
  mcp = await startBearerMcpServer();
});
afterEach(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  running = [];
  await mcp.close();
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { ANTHROPIC_API_KEY: "fake-key", ANTHROPIC_BASE_URL: fake.url },
    // The MCP server listens on the loopback, which only the operator's allow-list lets through.
    args: [
      "--lease-ms",
      "1000",
      "--model-retry-base-ms",
      "10",
      "--allow-unsandboxed-tier",
      "--allow-private-mcp-host",
      "127.0.0.1",
    ],
  });
  running.push(p);
  return p;
}

async function setup(client: Anthropic, token: string) {
  mcp.accepted.add(token);
  const agent = await client.beta.agents.create({
    name: "mcp-crash",
    model: MODEL,
    mcp_servers: [{ name: "docs", type: "url", url: mcp.url }],
    tools: [
      {
        type: "mcp_toolset",
        mcp_server_name: "docs",
        default_config: { permission_policy: { type: "always_allow" } },
      },
    ] as never,
  });
  const vault = await client.beta.vaults.create({ display_name: "v" } as never);
  await client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token, mcp_server_url: mcp.url },
  } as never);
  const environment = await client.beta.environments.create({
    name: "e",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    vault_ids: [vault.id],
  } as never);
}

/** Starts a call of `tool`, kills the server while the MCP server holds it, restarts, waits for the turn. */
async function crashMidCall(tool: string, input: Record<string, unknown>) {
  let server = await start();
  const session = await setup(server.client, `tok-${tool}`);
  mcp.hold = true;
  fake.enqueue({ kind: "tool_use", name: tool, input });
  await server.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
  const deadline = Date.now() + 10_000;
  while (!mcp.calls.some((c) => c.tool === tool)) {
    if (Date.now() > deadline) throw new Error("the MCP call never reached the server");
    await sleep(20);
  }
  server.child.kill("SIGKILL");
  await server.exited;
  mcp.release();
  server = await start();
  const events = await waitForHistory(server.client, session.id, (h) => h.some(isEndTurnIdle), 20_000);
  return { events, calls: mcp.calls.filter((c) => c.tool === tool) };
}

describe("MCP calls cut off by a crash", () => {
  it("a tool without idempotentHint is not repeated; the model is told the outcome is unknown", async () => {
    const { events, calls } = await crashMidCall("lookup", { q: "once" });
    expect(calls).toHaveLength(1);
    const results = events.filter((e) => e.type === "agent.mcp_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(JSON.stringify(results[0])).toContain("not safe to repeat");
  });

  it("a tool annotated idempotentHint: true is run again and its result committed once", async () => {
    const { events, calls } = await crashMidCall("counter", { name: "c" });
    expect(calls).toHaveLength(2);
    expect(calls[1]?.token).toBe("tok-counter");
    const results = events.filter((e) => e.type === "agent.mcp_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ is_error: false, content: [{ type: "text", text: "c=1" }] });
  });
});
