/**
 * Webhook deliveries survive a crash mid-delivery: the receiver takes the first POSTs and never
 * answers, the server process is killed with SIGKILL while they hang, and after a restart on the
 * same data every event arrives, verified by the SDK's `unwrap()`. At least once: a delivery seen
 * twice carries the same `webhook-id` both times. The signing secret is in no log line of either
 * process (debug level) and in no file of the data directory.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MODEL } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { TEST_API_KEY } from "../support/testServer.js";
import { type ReceivedPush, startWebhookReceiver } from "../support/webhookReceiver.js";

const unwrapper = new Anthropic({ apiKey: "unused" });
let dataDir: string;
let key = "";
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const running: ServerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-webhooks-restart-"));
  receiver = await startWebhookReceiver({
    verify: (raw, headers) => unwrapper.beta.webhooks.unwrap(raw, { headers, key }),
  });
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
    env: { AWAKEN_ALLOW_PUSH_HOSTS: "127.0.0.1", AWAKEN_LOG_LEVEL: "debug" },
    args: ["--push-retry-base-ms", "200"],
  });
  running.push(p);
  return p;
}

describe("webhooks across a crash", () => {
  it("deliveries cut short by a killed server are delivered after the restart, with the same webhook-id", async () => {
    const first = await start();
    const endpoint = await first.client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: ["agent.created"] as never,
    });
    key = endpoint.signing_secret;
    // The receiver takes each POST and hangs: the deliveries are in flight when the server dies.
    receiver.status = 0;
    const agents: Array<{ id: string }> = [];
    for (const name of ["one", "two", "three"]) {
      agents.push(await first.client.beta.agents.create({ name, model: MODEL }));
    }
    const deadline = Date.now() + 15_000;
    while (receiver.received.length < agents.length) {
      if (Date.now() > deadline) throw new Error(`only ${receiver.received.length} in flight`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const inFlight = receiver.received.map((p) => String(p.headers["webhook-id"]));
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");

    receiver.status = 200;
    const second = await start();
    const got = await receiver.waitFor(
      (a) => agents.every((agent) => a.some((p) => p.body?.data?.id === agent.id)),
      30_000,
    );
    expect(receiver.received.every((p) => p.verified)).toBe(true);
    // Each event went out under one webhook-id, before and after the crash.
    const idsByEvent = new Map<string, Set<string>>();
    for (const p of receiver.received as ReceivedPush[]) {
      const ids = idsByEvent.get(p.body.id) ?? new Set<string>();
      ids.add(String(p.headers["webhook-id"]));
      idsByEvent.set(p.body.id, ids);
    }
    for (const ids of idsByEvent.values()) expect(ids.size).toBe(1);
    expect(idsByEvent.size).toBe(agents.length);
    for (const id of inFlight) expect(got.map((p) => String(p.headers["webhook-id"]))).toContain(id);
    // Accepted once each: the restarted deliverer settled every row it delivered.
    const accepted = got.map((p) => String(p.headers["webhook-id"]));
    expect(new Set(accepted).size).toBe(accepted.length);

    // The secret is in no log line and no file: it is sealed at rest and never logged.
    const logs = [first, second].map((p) => p.stdout() + p.stderr()).join("\n");
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(endpoint.signing_secret);
    expect(logs).not.toContain(endpoint.signing_secret.slice("whsec_".length));
    for (const name of readdirSync(dataDir, { recursive: true }) as string[]) {
      const path = join(dataDir, name);
      let content: Buffer;
      try {
        content = readFileSync(path);
      } catch {
        continue; // a directory
      }
      expect(content.includes(endpoint.signing_secret.slice("whsec_".length)), name).toBe(false);
    }
  });
});
