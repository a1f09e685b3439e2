/**
 * An approval request survives any crash: the ticket was
 * committed before anyone saw the request, so a server killed with SIGKILL while Awaiting, or the
 * worker that parked the run killed right after, loses nothing. The answer may come from another
 * API client than the one that started the run, after it rebuilt the state from `events.list`.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  history,
  isActionIdle,
  isEndTurnIdle,
  MODEL,
  stopReason,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const KEY = "sk-awaken-approvals-crash-test";
const TOKEN = "approvals-crash-worker-token-0123";
let dataDir: string;
let processes: Array<ServerProcess | WorkerProcess> = [];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-approvals-"));
});
afterEach(async () => {
  for (const p of processes)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  processes = [];
  rmSync(dataDir, { recursive: true, force: true });
});

async function server(args: string[] = []): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { AWAKEN_WORKER_TOKEN: TOKEN },
    // Its environment runs bash on tier "none": an operator's choice.
    args: ["--lease-ms", "1000", "--allow-unsandboxed-tier", ...args],
  });
  processes.push(p);
  return p;
}

async function parkedSession(client: Anthropic): Promise<{ sessionId: string; useId: string }> {
  const agent = await client.beta.agents.create({
    name: "asks",
    model: MODEL,
    tools: [
      {
        type: "agent_toolset_20260401",
        configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
      },
    ] as never,
  });
  const environment = await client.beta.environments.create({
    name: "asks",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  // The offline model calls the tool the message names.
  await client.beta.sessions.events.send(session.id, {
    events: [userMessage('call bash {"command":"echo ran > proof.txt"}')],
  });
  const events = await waitForHistory(client, session.id, (h) => h.some(isActionIdle), 15_000);
  const use = events.find((e) => e.type === "agent.tool_use");
  expect(use).toMatchObject({ evaluated_permission: "ask" });
  return { sessionId: session.id, useId: use!.id };
}

/** Another API client: no state of its own, it learns what is pending from the history. */
function freshClient(url: string): Anthropic {
  return new Anthropic({ baseURL: url, apiKey: KEY, maxRetries: 0 });
}

async function confirmFromHistory(client: Anthropic, sessionId: string): Promise<WireEvent[]> {
  const events = await history(client, sessionId);
  const pending = stopReason(events.filter((e) => e.type === "session.status_idle").at(-1))?.event_ids ?? [];
  expect(pending).toHaveLength(1);
  await client.beta.sessions.events.send(sessionId, {
    events: [{ type: "user.tool_confirmation", tool_use_id: pending[0]!, result: "allow" }],
  });
  return waitForHistory(client, sessionId, (h) => h.some(isEndTurnIdle), 15_000);
}

describe("approvals survive crashes", () => {
  it("the server is killed with SIGKILL while Awaiting; after a restart another client answers and the run resumes", async () => {
    const first = await server();
    const { sessionId, useId } = await parkedSession(first.client);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await server();
    const client = freshClient(second.url);
    expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("idle");
    const events = await confirmFromHistory(client, sessionId);
    expect(events.filter((e) => e.type === "agent.tool_use").map((e) => e.id)).toEqual([useId]);
    expect(events.filter((e) => e.type === "agent.tool_result")).toMatchObject([
      { tool_use_id: useId, is_error: false },
    ]);
    expect(existsSync(join(dataDir, "workspaces", sessionId, "proof.txt"))).toBe(true);
  }, 45_000);

  it("the remote worker that parked the run is killed right after; another worker runs the approved call", async () => {
    const coordinator = await server(["--workers", "0"]);
    const workspaces = join(dataDir, "worker-workspaces");
    const parker: WorkerProcess = await startWorker(coordinator.url, TOKEN, {}, [
      "--workspace-dir",
      workspaces,
      "--allow-unsandboxed-tier",
    ]);
    processes.push(parker);
    const { sessionId } = await parkedSession(coordinator.client);
    parker.child.kill("SIGKILL");

    // The answer arrives while no worker is alive: it is committed and the run is queued again.
    const client = freshClient(coordinator.url);
    const events = await history(client, sessionId);
    const pending = stopReason(events.at(-1))?.event_ids ?? [];
    await client.beta.sessions.events.send(sessionId, {
      events: [{ type: "user.tool_confirmation", tool_use_id: pending[0]!, result: "allow" }],
    });
    expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("running");

    const next = await startWorker(coordinator.url, TOKEN, {}, [
      "--workspace-dir",
      workspaces,
      "--allow-unsandboxed-tier",
    ]);
    processes.push(next);
    const done = await waitForHistory(client, sessionId, (h) => h.some(isEndTurnIdle), 15_000);
    expect(done.filter((e) => e.type === "agent.tool_result")).toHaveLength(1);
    expect(existsSync(join(workspaces, sessionId, "proof.txt"))).toBe(true);
  }, 45_000);
});
