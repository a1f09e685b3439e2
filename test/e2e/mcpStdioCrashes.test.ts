/**
 * Stdio MCP calls and worker crashes: the same intent/result discipline as every MCP call. A kill -9
 * of the server mid-call takes the stdio server (in its bwrap sandbox) down with it; after the
 * restart, a call the server does not annotate `idempotentHint: true` is not run again (the model
 * is told its outcome is unknown), an annotated one is run again on a new process, and each
 * result is committed once.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { isEndTurnIdle, MODEL, sleep, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { bundleStdioMcpServer, placeStdioMcpServer } from "../support/stdioMcpHarness.js";

const KEY = "sk-awaken-mcp-stdio-crash-test";
let bundle: string;
let dataDir: string;
let fake: FakeModelServer;
let running: ServerProcess[] = [];

beforeAll(async () => {
  bundle = await bundleStdioMcpServer();
});
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-mcp-stdio-crash-"));
  fake = await startFakeAnthropic();
  fake.setFallback({ kind: "text", text: "done" });
});
afterEach(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  running = [];
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { ANTHROPIC_API_KEY: "fake-key", ANTHROPIC_BASE_URL: fake.url },
    args: ["--lease-ms", "1000", "--model-retry-base-ms", "10"],
  });
  running.push(p);
  return p;
}

async function setup(client: Anthropic, marker: string) {
  const agent = await client.beta.agents.create({
    name: "stdio-crash",
    model: MODEL,
    mcp_servers: [{ type: "stdio", name: "log", command: "node", args: ["server.mjs", "--marker", marker] }],
    tools: [
      {
        type: "mcp_toolset",
        mcp_server_name: "log",
        default_config: { permission_policy: { type: "always_allow" } },
      },
    ],
  } as never);
  const environment = await client.beta.environments.create({
    name: "e",
    config: { type: "cloud", sandbox: { tier: "bwrap" } } as never,
  });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  const workspace = placeStdioMcpServer(dataDir, session.id, bundle);
  return { session, workspace };
}

function processesNaming(marker: string): string[] {
  return readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const calls = (workspace: string): string[] => {
  try {
    return readFileSync(join(workspace, "calls.log"), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

/** Starts a call of `tool`, kills the server while the stdio server holds it, restarts, releases. */
async function crashMidCall(tool: string) {
  const marker = `stdio-crash-${tool}-${Math.random().toString(36).slice(2)}`;
  let server = await start();
  const { session, workspace } = await setup(server.client, marker);
  fake.enqueue({ kind: "tool_use", name: tool, input: { text: tool } });
  await server.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
  await until(() => calls(workspace).length > 0, "the call to reach the stdio server");
  server.child.kill("SIGKILL");
  await server.exited;
  // The stdio server died with the worker that started it (bwrap --die-with-parent).
  await until(() => processesNaming(marker).length === 0, "the stdio server to die with the worker");
  writeFileSync(join(workspace, "release"), "");
  server = await start();
  const events = await waitForHistory(server.client, session.id, (h) => h.some(isEndTurnIdle), 20_000);
  await until(() => processesNaming(marker).length === 0, "the restarted stdio server to end with its run");
  return { events, calls: calls(workspace) };
}

describe("stdio MCP calls cut off by a crash", () => {
  it("a tool without idempotentHint is not repeated; the model is told the outcome is unknown", async () => {
    const { events, calls } = await crashMidCall("append");
    expect(calls).toEqual(["append"]);
    const results = events.filter((e) => e.type === "agent.mcp_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(JSON.stringify(results[0])).toContain("not safe to repeat");
  }, 60_000);

  it("a tool annotated idempotentHint: true is run again on a new process and its result committed once", async () => {
    const { events, calls } = await crashMidCall("append_again");
    expect(calls).toEqual(["append_again", "append_again"]);
    const results = events.filter((e) => e.type === "agent.mcp_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      is_error: false,
      content: [{ type: "text", text: "appended: append_again" }],
    });
  }, 60_000);
});
