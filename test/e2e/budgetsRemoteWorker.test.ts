import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { history, MODEL, stopReason, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

// A remote `awaken worker` enforces the session's budget: it arrives with the claim (and every later
// change as a committed fact), so the worker refuses a request the coordinator would refuse.

const KEY = "sk-awaken-budget-remote-test";
const TOKEN = "worker-token-budget-0123456789";
const budget = (amount: string) => ({
  type: "limit" as const,
  max_list_cost: { amount, currency: "USD" as const },
});

let dataDir: string;
let server: ServerProcess;
let worker: WorkerProcess | undefined;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-budget-remote-"));
  // No in-process workers: every run is executed by the separate worker process.
  server = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { AWAKEN_WORKER_TOKEN: TOKEN },
    args: ["--workers", "0", "--lease-ms", "1000"],
  });
  worker = await startWorker(server.url, TOKEN, {});
});
afterEach(async () => {
  for (const p of [worker, server]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("budgets on a remote worker", () => {
  it("a spent budget stops the turn before the model is asked; raised, the next turn runs", async () => {
    const client = server.client;
    const agent = await client.beta.agents.create({ name: "budgeted", model: MODEL });
    const environment = await client.beta.environments.create({ name: "remote" });
    // A cap of 0 is reached before anything is spent.
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      budget: budget("0"),
    });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    let events = await waitForHistory(client, session.id, (h) =>
      h.some((e) => e.type === "session.status_idle"),
    );
    expect(stopReason(events.at(-1))).toEqual({ type: "budget_reached" });
    expect(events.filter((e) => e.type === "span.model_request_start")).toHaveLength(0);

    await client.beta.sessions.update(session.id, { budget: budget("1000") });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello again")] });
    events = await waitForHistory(
      client,
      session.id,
      (h) => h.filter((e) => e.type === "session.status_idle").length >= 2,
    );
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });
    const usage = (await history(client, session.id)).find((e) => e.type === "session.usage");
    expect(usage).toMatchObject({ budget: budget("1000") });
  }, 60_000);
});
