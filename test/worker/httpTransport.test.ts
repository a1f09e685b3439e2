import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { newId } from "../../src/kernel/ids.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import { createSession, StreamReader, userMessage } from "../support/sdkHelpers.js";

const KEY = "sk-awaken-http-transport-test";
const TOKEN = "worker-token-fence-0123456789";
const silent = { info: () => {}, warn: () => {} };
let dataDir: string;
let server: RunningServer;
let transport: HttpWorkerTransport;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-http-transport-"));
  server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 0,
      leaseMs: 5_000,
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
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function queuedRun() {
  const client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
  const { session } = await createSession(client);
  await client.beta.sessions.events.send(session.id, { events: [userMessage("fence me")] });
}

function thinkingOp(a: { runId: string; threadId: string; owner: string; epoch: number }, version: number) {
  const op: CommitOperation = {
    opId: `op_${a.runId}_v${version}`,
    runId: a.runId,
    threadId: a.threadId,
    owner: a.owner,
    epoch: a.epoch,
    expectedVersion: version,
    facts: [{ id: newId("sevt"), type: "agent.thinking", body: {} }],
  };
  return op;
}

describe("the HTTP worker transport keeps the commit fence", () => {
  it("a retried commit returns the original receipt; a stale worker's commit is rejected", async () => {
    await queuedRun();
    const first = await transport.claim("worker-a/0", 0);
    expect(first).not.toBeNull();
    const version = first!.history.at(-1)!.seq;

    const op = thinkingOp(first!, version);
    const committed = await transport.commit(op);
    expect(committed).toMatchObject({ ok: true, duplicate: false });
    // The same operation again (a retry after a lost response): the original receipt, nothing appended.
    const retried = await transport.commit(op);
    expect(retried).toEqual({ ok: true, duplicate: true, receipt: committed.ok ? committed.receipt : null });
    const facts = await transport.readThread(first!.threadId, 0);
    expect(facts.filter((f) => f.type === "agent.thinking")).toHaveLength(1);

    // Another worker takes the run over (here: A handed it back); A's next commit is stale.
    await transport.release(first!.runId, first!.owner, first!.epoch);
    const second = await transport.claim("worker-b/0", 0);
    expect(second?.epoch).toBe(first!.epoch + 1);
    expect(await transport.renew(first!.runId, first!.owner, first!.epoch, 0)).toBe(false);
    const stale = await transport.commit(thinkingOp(first!, version + 1));
    expect(stale).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect(await transport.renew(second!.runId, second!.owner, second!.epoch, 0)).toBe(true);
  });

  it("a commit's previews reach streams before its facts, and a retried commit does not repeat them", async () => {
    await queuedRun();
    const activation = await transport.claim("worker-a/0", 0);
    const client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
    const reader = await StreamReader.open(client, activation!.sessionId, {
      event_deltas: ["agent.thinking"],
    });
    try {
      const op = thinkingOp(activation!, activation!.history.at(-1)!.seq);
      const thinkingId = op.facts[0]!.id;
      const body = JSON.stringify({
        op,
        evidence: [
          {
            sessionId: activation!.sessionId,
            evidence: { kind: "preview_start", eventId: thinkingId, preview: "thinking" },
          },
          {
            sessionId: activation!.sessionId,
            evidence: { kind: "preview_delta", eventId: thinkingId, index: 0, text: "hmm" },
          },
        ],
      });
      // The same request twice, as a retry after a lost response sends it.
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await fetch(`${server.url}/v1/awaken/worker/commit`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body,
        });
        expect(await response.json()).toMatchObject({ ok: true, duplicate: attempt === 1 });
      }
      await reader.until((e) => e.id === thinkingId);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const types = reader.events.map((e) => e.type).filter((t) => t !== "ping");
      expect(types.slice(-3)).toEqual(["event_start", "event_delta", "agent.thinking"]);
      expect(types.filter((t) => t === "event_delta")).toHaveLength(1);
    } finally {
      await reader.close();
    }
  });

  it("an empty queue answers null, and a bad request is refused with 400", async () => {
    expect(await transport.claim("worker-a/0", 0)).toBeNull();
    const response = await fetch(`${server.url}/v1/awaken/worker/renew`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ runId: "r", owner: "o", epoch: -1 }),
    });
    expect(response.status).toBe(400);
  });

  it("without a worker token the server has no worker routes", async () => {
    const plain = await startAllInOne(
      {
        host: "127.0.0.1",
        port: 0,
        dataDir: join(dataDir, "plain"),
        workers: 0,
        leaseMs: 5_000,
        modelIdleTimeoutMs: 300_000,
        ssePingMs: 15_000,
        apiKey: KEY,
        retry: {},
        env: {},
      },
      pino({ level: "silent" }),
    );
    try {
      const response = await fetch(`${plain.url}/v1/awaken/worker/config`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});
