import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

/**
 * A fresh start where the data dir (or a worker's workspace dir) sits under a directory other
 * users cannot enter (a home directory, /root, a 0700 data dir): the default tier's built-in
 * tools still reach their workspace, and the closed directories stay closed. Real bubblewrap,
 * real `awaken up` and `awaken worker` processes, the official SDK.
 */

const KEY = "sk-awaken-sandbox-reach-test";
const TOKEN = "sandbox-reach-worker-token-0123";
const dirs: string[] = [];
const running: Array<ServerProcess | WorkerProcess> = [];

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory only its owner can enter (mkdtemp makes it 0700). */
function closedParent(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-closed-"));
  dirs.push(dir);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  return dir;
}

async function up(dataDir: string, args: string[] = []): Promise<ServerProcess> {
  const server = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { AWAKEN_WORKER_TOKEN: TOKEN },
    args,
  });
  running.push(server);
  return server;
}

/** One bash call on a default (bwrap) cloud environment; what the tool answered. */
async function bashOnDefaultTier(
  client: Anthropic,
): Promise<{ sessionId: string; text: string; isError: unknown }> {
  const agent = await client.beta.agents.create({
    name: "reach",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }] as never,
  });
  const environment = await client.beta.environments.create({ name: "reach" });
  expect(environment.config).toMatchObject({ type: "cloud", sandbox: { tier: "bwrap" } });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  await client.beta.sessions.events.send(session.id, {
    events: [userMessage('call bash {"command":"echo reached > proof.txt && cat proof.txt && pwd"}')],
  });
  const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 20_000);
  const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
  return { sessionId: session.id, text: textOf(result), isError: result?.is_error };
}

function expectReached(outcome: { text: string; isError: unknown }, hostWorkspace: string) {
  expect(outcome).toMatchObject({ isError: false });
  expect(outcome.text).toBe("reached\n/workspace\n[exit code: 0]");
  expect(readFileSync(join(hostWorkspace, "proof.txt"), "utf8")).toBe("reached\n");
}

describe("built-in tools on a fresh start under a directory others cannot enter", () => {
  it("awaken up: --data-dir under a 0700 parent runs bash in a bwrap sandbox", async () => {
    const parent = closedParent();
    const dataDir = join(parent, "data");
    const server = await up(dataDir);
    const outcome = await bashOnDefaultTier(server.client);
    expectReached(outcome, join(dataDir, "workspaces", outcome.sessionId));
    expect(statSync(parent).mode & 0o777).toBe(0o700);
  });

  it("awaken worker: its default workspace dir under a 0700 working directory", async () => {
    const coordinator = await up(join(closedParent(), "data"), ["--workers", "0"]);
    const home = join(closedParent(), "home");
    mkdirSync(home, { mode: 0o700 });
    const worker = await startWorker(coordinator.url, TOKEN, {}, [], undefined, home);
    running.push(worker);
    const outcome = await bashOnDefaultTier(coordinator.client);
    expectReached(outcome, join(home, ".awaken", "workspaces", outcome.sessionId));
    expect(statSync(home).mode & 0o777).toBe(0o700);
  });

  it("awaken worker: an explicit --workspace-dir under a 0700 parent", async () => {
    const coordinator = await up(join(closedParent(), "data"), ["--workers", "0"]);
    const parent = closedParent();
    const workspaces = join(parent, "deep", "workspaces");
    const worker = await startWorker(coordinator.url, TOKEN, {}, ["--workspace-dir", workspaces]);
    running.push(worker);
    const outcome = await bashOnDefaultTier(coordinator.client);
    expectReached(outcome, join(workspaces, outcome.sessionId));
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    expect(existsSync(join(workspaces, outcome.sessionId))).toBe(true);
  });
});
