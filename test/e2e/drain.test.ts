import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  createSession,
  history,
  isEndTurnIdle,
  StreamReader,
  sleep,
  userMessage,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { TEST_API_KEY, TEST_MASTER_KEY } from "../support/testServer.js";

// Two `awaken up` replicas on one PostgreSQL schema; SIGTERM one while turns of several lengths are
// in flight on both. The lease is far longer than every bound here: a run the drained replica did
// not finish completes in time only because it was handed back (and the other replica woken).
const DRAIN_MS = 1_500;
const LEASE_MS = 30_000;
const DELAY_MS = 80; // per streamed word
const SESSIONS = 8;

let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
const processes: ServerProcess[] = [];
const readers: StreamReader[] = [];
const dirs: string[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
});
afterEach(async () => {
  for (const r of readers.splice(0)) await r.close();
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await schema?.drop();
  schema = undefined;
});

async function replica(workers: number): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-drain-"));
  dirs.push(dataDir);
  const server = await startServerProcess({
    dataDir,
    apiKey: TEST_API_KEY,
    env: { AWAKEN_MASTER_KEY: TEST_MASTER_KEY, AWAKEN_OFFLINE_DELAY_MS: String(DELAY_MS) },
    args: [
      "--database-url",
      schema!.url,
      "--workers",
      String(workers),
      "--lease-ms",
      String(LEASE_MS),
      "--drain-ms",
      String(DRAIN_MS),
    ],
  });
  processes.push(server);
  return server;
}

/** Every `/readyz` status the replica answers until it stops answering. */
function watchReadiness(server: ServerProcess): { seen: string[]; done: Promise<void> } {
  const seen: string[] = [];
  const done = (async () => {
    for (;;) {
      try {
        const response = await fetch(`${server.url}/readyz`);
        const body = (await response.json()) as { status: string };
        seen.push(`${response.status} ${body.status}`);
      } catch {
        return; // it closed its port
      }
      await sleep(25);
    }
  })();
  return { seen, done };
}

describe("SIGTERM drain of an awaken up replica", () => {
  it("exits 0 within the drain deadline, says draining meanwhile, and loses or repeats no turn", async () => {
    const a = await replica(4);
    const b = await replica(4);
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push((await createSession(a.client)).session.id);
    for (const id of sessions) readers.push(await StreamReader.open(b.client, id));
    // Previews stay in the replica whose worker streams them: one previewing stream per replica
    // shows where each turn's model request is in flight (nothing of it is committed before its answer).
    const previewing = { event_deltas: ["agent.message" as const] };
    const onA: StreamReader[] = [];
    const onB: StreamReader[] = [];
    for (const id of sessions) {
      onA.push(await StreamReader.open(a.client, id, previewing));
      onB.push(await StreamReader.open(b.client, id, previewing));
    }
    readers.push(...onA, ...onB);
    const previewed = (r: StreamReader) =>
      r.events.filter((e) => e.type === "event_start").map((e) => (e.event as { id: string }).id);

    // Answers from 0.4 s to 4.9 s (the offline model echoes the words); from the 4th on, longer
    // than the drain.
    const sent = Date.now();
    await Promise.all(
      sessions.map((id, i) => {
        const words = Array.from({ length: 5 + 8 * i }, (_, w) => `s${i}w${w}`).join(" ");
        return a.client.beta.sessions.events.send(id, { events: [userMessage(words)] });
      }),
    );
    // Every slot of both replicas is busy (8 turns, 8 slots): each turn's answer streams on one of them.
    await Promise.all(
      sessions.map((_, i) =>
        Promise.race([onA[i]!, onB[i]!].map((r) => r.until((e) => e.type === "event_start"))),
      ),
    );
    const ready = watchReadiness(a);
    await sleep(100);

    const signalled = Date.now();
    a.child.kill("SIGTERM");
    const code = await a.exited;
    const tookMs = Date.now() - signalled;
    await ready.done;
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(DRAIN_MS + 3_000);
    expect(ready.seen[0]).toBe("200 ready");
    expect(ready.seen).toContain("503 draining");
    expect(ready.seen.slice(ready.seen.indexOf("503 draining"))).not.toContain("200 ready");

    // Every turn ends on B, long before any lease of A's could have lapsed.
    await Promise.all(readers.slice(0, SESSIONS).map((r) => r.until(isEndTurnIdle, { timeoutMs: 15_000 })));
    expect(Date.now() - sent).toBeLessThan(LEASE_MS / 2);

    // A holds 4 of the 8 turns, so at least one of the 5 longer than the drain: it was cut off
    // there (the message A previewed never committed; the request left nothing) and answered
    // again on B, once.
    let handedBack = 0;
    for (const [i, id] of sessions.entries()) {
      const events: WireEvent[] = await history(b.client, id);
      const count = (type: string) => events.filter((e) => e.type === type).length;
      expect(count("user.message"), id).toBe(1);
      expect(count("agent.message"), id).toBe(1);
      expect(count("span.model_request_start"), id).toBe(1);
      expect(events.filter(isEndTurnIdle).length, id).toBe(1);
      const answer = events.find((e) => e.type === "agent.message")!.id;
      const cutOff = previewed(onA[i]!).filter((previewId) => previewId !== answer);
      for (const previewId of cutOff)
        expect(
          events.some((e) => e.id === previewId),
          id,
        ).toBe(false);
      if (cutOff.length > 0) {
        expect(previewed(onB[i]!), id).toContain(answer);
        handedBack++;
      }
    }
    expect(handedBack).toBeGreaterThan(0);
  });
});
