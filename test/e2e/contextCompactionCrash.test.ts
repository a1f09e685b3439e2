/**
 * Context compaction across crashes: the real `awaken up` process killed with SIGKILL while the
 * summary is being made (nothing committed: the next owner asks for it again), and again after
 * the compaction was committed but before the answer (the compaction is read, never redone).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SUMMARIZER_SYSTEM } from "../../src/runtime/summaryRequest.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer, RecordedRequest } from "../support/fakeModelScript.js";
import { history, isEndTurnIdle, type WireEvent } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const KEY = "sk-awaken-compaction-crash-test";
const MODEL = "claude-sonnet-4-6";
const FILLER = " lorem".repeat(95);
const question = (n: number) => `turn ${n}:${FILLER}`;
const SUMMARY = "SUMMARY: lorem turns 1 to 3, each answered.";

let dataDir: string;
let fake: FakeModelServer;
let running: ServerProcess[] = [];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-compaction-crash-"));
  fake = await startFakeAnthropic();
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
    env: {
      ANTHROPIC_API_KEY: "fake-key",
      ANTHROPIC_BASE_URL: fake.url,
      AWAKEN_CONTEXT_WINDOWS: `${MODEL}=4600`,
    },
    args: ["--lease-ms", "1000", "--model-retry-base-ms", "10"],
  });
  running.push(p);
  return p;
}

async function kill(p: ServerProcess): Promise<void> {
  p.child.kill("SIGKILL");
  await p.exited;
}

async function untilIdle(p: ServerProcess, sessionId: string, turns: number): Promise<WireEvent[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events = await history(p.client, sessionId);
    if (events.filter(isEndTurnIdle).length >= turns) return events;
    if (Date.now() > deadline)
      throw new Error(`turn ${turns} never ended: ${events.map((e) => e.type).join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const isSummarization = (request: RecordedRequest) => request.body.system === SUMMARIZER_SYSTEM;

describe("context compaction and crashes", () => {
  it("a summary cut off by a crash is made again; a committed one is never made twice", async () => {
    let summarizations = 0;
    let answers = 0;
    let hangAnswer = false;
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setFallback((body) => {
      if (body.system === SUMMARIZER_SYSTEM)
        // The first summarization never finishes (its process is killed meanwhile); the second
        // waits for the test to look at the history first.
        return ++summarizations === 1
          ? { kind: "hang" }
          : { kind: "text", text: SUMMARY, heldUntil: released };
      answers += 1;
      if (hangAnswer) {
        hangAnswer = false;
        return { kind: "hang" };
      }
      return { kind: "text", text: `ok ${answers}` };
    });
    let server = await start();
    const agent = await server.client.beta.agents.create({ name: "crash", model: MODEL });
    const env = await server.client.beta.environments.create({ name: "e" });
    const session = await server.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const send = (p: ServerProcess, n: number) =>
      p.client.beta.sessions.events.send(session.id, {
        events: [{ type: "user.message", content: [{ type: "text", text: question(n) }] }],
      });
    for (const n of [1, 2, 3]) {
      await send(server, n);
      await untilIdle(server, session.id, n);
    }
    expect(fake.requests.some(isSummarization)).toBe(false);

    // Turn 4 outgrows the window: the summarization hangs and the process dies under it.
    const sent = fake.requests.length;
    await send(server, 4);
    await fake.waitForRequests(sent + 1);
    expect(isSummarization(fake.requests[sent] as RecordedRequest)).toBe(true);
    await kill(server);

    // The next owner asks for the summary again: nothing of the first one was committed.
    server = await start();
    await fake.waitForRequests(sent + 2, 20_000);
    expect(isSummarization(fake.requests[sent + 1] as RecordedRequest)).toBe(true);
    const compactions = async (p: ServerProcess) =>
      (await history(p.client, session.id)).filter((e) => e.type === "agent.thread_context_compacted");
    expect(await compactions(server)).toHaveLength(0);

    // The compaction is committed, then the process dies while the answer is being asked for.
    hangAnswer = true;
    release();
    await fake.waitForRequests(sent + 3, 20_000);
    expect(isSummarization(fake.requests[sent + 2] as RecordedRequest)).toBe(false);
    expect(await compactions(server)).toHaveLength(1);
    await kill(server);

    // The next owner reads the committed compaction: the answer is asked for again, the summary not.
    server = await start();
    const events = await untilIdle(server, session.id, 4);
    expect(events.filter((e) => e.type === "agent.thread_context_compacted")).toHaveLength(1);
    expect(summarizations).toBe(2);
    expect(fake.requests.slice(sent).map(isSummarization)).toEqual([true, true, false, false]);
    const last = fake.requests.at(-1) as RecordedRequest;
    expect(JSON.stringify(last.body.messages)).toContain(SUMMARY);
    expect(JSON.stringify(last.body.messages)).toContain("turn 4:");
    expect(JSON.stringify(last.body.messages)).not.toContain("turn 1:");
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.filter((e) => e.type === "user.message")).toHaveLength(4);
    // Three process starts and two lapsed claims: more than the default 30 s on a busy machine.
  }, 90_000);
});
