/**
 * Push notifications survive a crash: the webhook answers 503 while the task completes, the server
 * process is killed with SIGKILL, and after a restart on the same data the receiver, now up, gets
 * every notification of the task, ending with completed. Delivery is at least once, each row with
 * a stable `X-Awaken-Delivery-Id` a receiver dedupes by (here no attempt was cut short, so each
 * arrives once).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { a2aClientAt, stateName, userRequest } from "../support/a2aClient.js";
import { MODEL } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { TEST_API_KEY } from "../support/testServer.js";
import { startWebhookReceiver } from "../support/webhookReceiver.js";

let dataDir: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const running: ServerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-push-restart-"));
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
  }
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir,
    apiKey: TEST_API_KEY,
    // The operator allows the loopback receiver; nothing else about push is configured.
    env: { AWAKEN_ALLOW_PUSH_HOSTS: "127.0.0.1" },
    // Backoff from 200 ms, so the attempts before the crash leave the next one due soon after it.
    args: ["--push-retry-base-ms", "200"],
  });
  running.push(p);
  return p;
}

describe("A2A push across a crash", () => {
  it("a notification left undelivered by a killed server is delivered after the restart", async () => {
    receiver.status = 503;
    const first = await start();
    const agent = await first.client.beta.agents.create({ name: "push restart", model: MODEL });
    const client = await a2aClientAt(first.url, agent.id);
    const token = "restart-token";
    const task = await client.sendMessage(
      userRequest(
        "survive a crash",
        {},
        {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: "",
            id: "hook",
            taskId: "",
            url: receiver.url,
            token,
            authentication: undefined,
          },
          returnImmediately: false,
        },
      ),
    );
    if (!("status" in task)) throw new Error("expected a task");
    expect(stateName(task.status?.state)).toBe("COMPLETED");
    // The receiver was tried and turned it away; nothing was accepted.
    const deadline = Date.now() + 10_000;
    while (receiver.received.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(receiver.received.length).toBeGreaterThan(0);
    expect(receiver.accepted()).toEqual([]);

    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    receiver.status = 200;
    await start();
    const got = await receiver.waitFor(
      (a) => a.some((p) => p.body?.statusUpdate?.status?.state === "TASK_STATE_COMPLETED"),
      30_000,
    );
    const states = got.map((p) =>
      p.body?.task ? `task:${p.body.task.status.state}` : (p.body?.statusUpdate?.status?.state ?? "artifact"),
    );
    expect(states).toEqual([
      "task:TASK_STATE_SUBMITTED",
      "TASK_STATE_WORKING",
      "artifact",
      "TASK_STATE_COMPLETED",
    ]);
    for (const p of got) expect(p.headers["x-a2a-notification-token"]).toBe(token);
    const ids = got.map((p) => p.headers["x-awaken-delivery-id"]);
    expect(new Set(ids).size).toBe(ids.length);
    // The first row's id is the one the crashed process tried: stable across the restart.
    expect(receiver.received[0]?.headers["x-awaken-delivery-id"]).toBe(ids[0]);
  });

  it("awaken up refuses a push allow-list entry that is no host, address or CIDR range, naming it", () => {
    const main = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
    const missing = join(dataDir, "never-created");
    const result = spawnSync(
      process.execPath,
      [main, "up", "--port", "0", "--data-dir", missing, "--allow-push-host", "127.0.0.1,https://x"],
      { env: { PATH: process.env.PATH }, encoding: "utf8", timeout: 15_000 },
    );
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('--allow-push-host: allow-list entry "https://x"');
    expect(existsSync(missing)).toBe(false);
  });
});
