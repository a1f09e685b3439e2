/**
 * Fault: kill -9 a worker while a server-side (Hand) tool call is executing. The call's
 * intent was committed before it ran; the next worker must not silently run it again. It re-runs
 * the call only when the tool is declared safe to repeat (`grep`); otherwise (`bash`) the call ends
 * as indeterminate and the model is told so.
 *
 * Both workers share one workspace directory, as two workers on one host do, so the test can see
 * the side effects a command left behind.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, startFaultCluster, until } from "../support/faultCluster.js";
import { checkHistoryInvariants, sessionFacts } from "../support/historyInvariants.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, userMessage } from "../support/sdkHelpers.js";

let cluster: FaultCluster | undefined;
let workspaces: string;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  cluster = await startFaultCluster({ leaseMs: 1000 });
  workspaces = mkdtempSync(join(tmpdir(), "awaken-fault-ws-"));
});
afterEach(async () => {
  await cluster?.dispose();
  cluster = undefined;
  rmSync(workspaces, { recursive: true, force: true });
});

async function handSession(client: Anthropic) {
  const agent = await client.beta.agents.create({
    name: "hands",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }],
  });
  const environment = await client.beta.environments.create({
    name: "hands",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

// Its environment runs bash on tier "none": the operator option, on the replica and the workers.
const UNSANDBOXED = ["--allow-unsandboxed-tier"];
const workerArgs = () => ["--concurrency", "1", "--workspace-dir", workspaces, ...UNSANDBOXED];
const ofType = <F extends { type: string }>(facts: F[], type: string): F[] =>
  facts.filter((f) => f.type === type);
const isEndTurn = (f: { type: string; body: Record<string, unknown> }) =>
  f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";
const resultText = (f: { body: Record<string, unknown> } | undefined) =>
  ((f?.body.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("");

describe("fault: a worker killed while a Hand tool call executes", () => {
  it("bash (not safe to repeat): the next worker does not run it again; the model is told the outcome is unknown", async () => {
    const c = cluster!;
    const replica = await c.startReplica(UNSANDBOXED);
    const first = await c.startWorker(replica.url, {}, workerArgs());
    const session = await handSession(replica.client);
    const effects = join(workspaces, session.id, "effects.log");
    await replica.client.beta.sessions.events.send(session.id, {
      events: [
        userMessage(
          'call bash {"command":"echo started >> effects.log; sleep 3; echo finished >> effects.log"}',
        ),
      ],
    });

    // The command is running: its first side effect is on disk, its intent committed before it.
    await until("the command's first side effect", () => safeRead(effects).includes("started"));
    const before = await sessionFacts(c.databaseUrl, session.id);
    expect(ofType(before, "awaken.tool_execution").map((f) => f.body.attempt)).toEqual([1]);
    expect(ofType(before, "agent.tool_result")).toHaveLength(0);
    first.child.kill("SIGKILL");
    const killedAt = Date.now();

    await c.startWorker(replica.url, {}, workerArgs());
    const facts = await until(
      "the second worker's end_turn",
      async () => {
        const f = await sessionFacts(c.databaseUrl, session.id);
        return f.some(isEndTurn) ? f : undefined;
      },
      20_000,
    );

    // Not run again: one intent, one start; the result says the outcome is unknown.
    expect(ofType(facts, "awaken.tool_execution").map((f) => f.body.attempt)).toEqual([1]);
    const results = ofType(facts, "agent.tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]?.body).toMatchObject({
      tool_use_id: ofType(facts, "agent.tool_use")[0]?.id,
      is_error: true,
    });
    expect(resultText(results[0])).toMatch(/not safe to repeat.*unknown/s);
    // The model was asked again with that result and answered it.
    const answer = ofType(facts, "agent.message").at(-1);
    expect(JSON.stringify(answer?.body)).toContain("Tool result received (error)");
    // The killed command died with its worker (parent-death signal): it never finished.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + 3_500 - Date.now())));
    expect(safeRead(effects)).toBe("started\n");

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
  }, 45_000);

  it("grep (safe to repeat): the next worker runs it again as attempt 2 and the model gets its result", async () => {
    const c = cluster!;
    const replica = await c.startReplica(UNSANDBOXED);
    const first = await c.startWorker(replica.url, {}, workerArgs());
    const session = await handSession(replica.client);
    const client = replica.client;

    // A FIFO named as grep's path makes the search wait until the test writes to it (grep reads a
    // FIFO it is given, like GNU grep; `read` refuses one): a call that is surely in flight.
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call bash {"command":"mkfifo pipe"}')],
    });
    await until("the FIFO", async () => (await sessionFacts(c.databaseUrl, session.id)).some(isEndTurn));
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call grep {"pattern":"written","path":"pipe"}')],
    });
    const grepIntent = (attempt: number) => async () => {
      const facts = await sessionFacts(c.databaseUrl, session.id);
      const use = ofType(facts, "agent.tool_use").find((f) => f.body.name === "grep");
      return ofType(facts, "awaken.tool_execution").find(
        (f) => f.body.tool_use_id === use?.id && f.body.attempt === attempt,
      );
    };
    await until("the grep's first attempt", grepIntent(1));
    first.child.kill("SIGKILL");

    await c.startWorker(replica.url, {}, workerArgs());
    await until("the grep's second attempt", grepIntent(2), 20_000);
    // Opening the FIFO for writing waits for the second attempt's reader (the first one died with
    // its worker, so it cannot take the data).
    await writeFile(join(workspaces, session.id, "pipe"), "written by the test\n");

    const facts = await until(
      "the turn's end",
      async () => {
        const f = await sessionFacts(c.databaseUrl, session.id);
        return f.filter(isEndTurn).length === 2 ? f : undefined;
      },
      20_000,
    );
    const grepUse = ofType(facts, "agent.tool_use").find((f) => f.body.name === "grep");
    const results = ofType(facts, "agent.tool_result").filter((f) => f.body.tool_use_id === grepUse?.id);
    expect(results).toHaveLength(1);
    expect(results[0]?.body.is_error).toBe(false);
    expect(resultText(results[0])).toBe("pipe:1:written by the test");
    expect(JSON.stringify(ofType(facts, "agent.message").at(-1)?.body)).toContain("written by the test");

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
  }, 60_000);
});

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
