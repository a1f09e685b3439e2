import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { PRESENCE_GRACE_MS } from "../../src/coordinator/workerConnections.js";
import { newId } from "../../src/kernel/ids.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import { PresenceStream } from "../../src/worker/presenceStream.js";
import { WORKER_ROUTE_PREFIX } from "../../src/worker/transportWire.js";
import { createSession, userMessage } from "../support/sdkHelpers.js";

/**
 * The presence stream against a real coordinator (SQLite, no in-process workers) with a lease far
 * longer than any wait here: a run that becomes claimable again did so because the stream dropped.
 */
const KEY = "sk-awaken-presence-test";
const TOKEN = "worker-token-presence-0123456789";
const LEASE_MS = 60_000;
const silent = { info: () => {}, warn: () => {} };
let dataDir: string;
let server: RunningServer;
let transport: HttpWorkerTransport;
const streams: PresenceStream[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-presence-"));
  server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 0,
      leaseMs: LEASE_MS,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: KEY,
      workerToken: TOKEN,
      retry: {},
      env: {},
    },
    pino({ level: "silent" }),
  );
  transport = new HttpWorkerTransport({ baseUrl: server.url, token: TOKEN, log: silent, claimWaitMs: 0 });
});
afterEach(async () => {
  for (const s of streams.splice(0)) await s.close();
  transport.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function queuedRun() {
  const client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
  const { session } = await createSession(client);
  await client.beta.sessions.events.send(session.id, { events: [userMessage("hold me")] });
}

/** A presence stream for `identity`, resolved once the coordinator applied its hello. */
async function present(
  identity: string,
  held: () => Array<{ runId: string; owner: string; epoch: number }> = () => [],
) {
  let opened!: () => void;
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const stream = new PresenceStream({
    baseUrl: server.url,
    token: TOKEN,
    identity,
    held,
    log: silent,
    onOpen: opened,
  });
  streams.push(stream);
  stream.start();
  await open;
  return stream;
}

/** Claims as `owner` until a run comes back; the time it took. */
async function claimUntilFound(owner: string, timeoutMs: number) {
  const started = Date.now();
  for (;;) {
    const activation = await transport.claim(owner, LEASE_MS);
    if (activation) return { activation, waitedMs: Date.now() - started };
    if (Date.now() - started > timeoutMs) throw new Error(`${owner} found no run within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a remote worker's presence stream", () => {
  it("when it drops, the worker's runs are claimable after the grace, far inside the lease, and its late commit is refused", async () => {
    await queuedRun();
    const alpha = await present("alpha.0a0a");
    const held = (await transport.claim("alpha.0a0a/0", LEASE_MS))!;
    expect(held).not.toBeNull();
    expect(await transport.claim("beta.0b0b/0", LEASE_MS)).toBeNull();

    // Its connection closes without a goodbye (what the kernel does for a killed process).
    await alpha.close();
    const { activation, waitedMs } = await claimUntilFound("beta.0b0b/0", 10_000);
    expect(activation).toMatchObject({ runId: held.runId, epoch: held.epoch + 1 });
    expect(waitedMs).toBeGreaterThanOrEqual(PRESENCE_GRACE_MS - 50);
    expect(waitedMs).toBeLessThan(LEASE_MS / 4);

    const version = held.history.at(-1)!.seq;
    const late = await transport.commit({
      opId: newId("op"),
      runId: held.runId,
      threadId: held.threadId,
      owner: held.owner,
      epoch: held.epoch,
      expectedVersion: version,
      facts: [{ id: newId("sevt"), type: "agent.thinking", body: {} }],
      settle: "done",
    });
    expect(late).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect(await transport.renew(held.runId, held.owner, held.epoch, LEASE_MS)).toBe(false);
  });

  it("a worker that reconnects to the same replica within the grace keeps its runs (the pending lapse is dropped)", async () => {
    await queuedRun();
    const first = await present("alpha.0a0a");
    const held = (await transport.claim("alpha.0a0a/0", LEASE_MS))!;
    await first.close();
    // Naming nothing it holds: what spares the run here is the reconnect itself, not a renewal.
    await present("alpha.0a0a");
    // Past the grace: nothing to await but the lapse that must not come.
    await new Promise((resolve) => setTimeout(resolve, PRESENCE_GRACE_MS + 500));
    expect(await transport.claim("beta.0b0b/0", LEASE_MS)).toBeNull();
    expect(await transport.renew(held.runId, held.owner, held.epoch, LEASE_MS)).toBe(true);
  });

  it("a worker that renewed after the drop (back through another replica) keeps its runs", async () => {
    await queuedRun();
    const alpha = await present("alpha.0a0a");
    const held = (await transport.claim("alpha.0a0a/0", LEASE_MS))!;
    await alpha.close();
    // What a hello on another replica does: renew the claim there, within the grace.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await transport.renew(held.runId, held.owner, held.epoch, LEASE_MS)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, PRESENCE_GRACE_MS + 500));
    expect(await transport.claim("beta.0b0b/0", LEASE_MS)).toBeNull();
  });

  it("refuses a malformed identity, one naming in-process workers, and a missing token", async () => {
    const post = (body: unknown, token = TOKEN) =>
      fetch(`${server.url}${WORKER_ROUTE_PREFIX}/presence`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    for (const identity of ["", "a/b", "a b", "a\u0000b", "x".repeat(201)]) {
      const answer = await post({ identity, held: [] });
      expect(answer.status, JSON.stringify(identity)).toBe(400);
    }
    expect((await post({ identity: "local.1234", held: [] })).status).toBe(400);
    expect((await post({ identity: "alpha.0a0a", held: [] }, "wrong-token-0123456789")).status).toBe(401);
  });
});
