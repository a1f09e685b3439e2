import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type {
  BetaManagedAgentsOutcomeEvaluationResource,
  BetaManagedAgentsUserDefineOutcomeEventParams,
} from "@anthropic-ai/sdk/resources/beta/sessions";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  BAD_REQUEST,
  createSession,
  expectApiError,
  history,
  isEndTurnIdle,
  RFC3339,
  StreamReader,
  stopReason,
  textOf,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// Outcomes through the SDK over HTTP: after each attempt of the agent a grader (the offline
// model's deterministic grading rule, src/providers/offlineGrader.ts) judges it against the rubric.
// The same scenarios on SQLite and on PostgreSQL.

/** A grader heartbeat every 100 ms, so a slowed grader shows `span.outcome_evaluation_ongoing`. */
const SERVER_ENV = { ...process.env, AWAKEN_OUTCOME_HEARTBEAT_MS: "100" };

type Backend = { name: string; start(): Promise<{ server: TestServer; dispose(): Promise<void> }> };

const BACKENDS: Backend[] = [
  {
    name: "SQLite",
    start: async () => {
      const server = await startTestServer({ env: SERVER_ENV });
      return { server, dispose: () => server.close() };
    },
  },
  {
    name: "PostgreSQL",
    start: async () => {
      const schema = await emptySchema();
      const server = await startTestServer({ env: SERVER_ENV, databaseUrl: schema.url });
      return {
        server,
        dispose: async () => {
          await server.close();
          await schema.drop();
        },
      };
    },
  },
];

function outcome(
  description: string,
  rubric: string,
  maxIterations?: number,
): BetaManagedAgentsUserDefineOutcomeEventParams {
  return {
    type: "user.define_outcome",
    description,
    rubric: { type: "text", content: rubric },
    ...(maxIterations !== undefined ? { max_iterations: maxIterations } : {}),
  };
}

/** Sends the definition on an open stream; the events from its echo to the turn's closing idle. */
async function defineAndSettle(
  t: TestServer,
  reader: StreamReader,
  sessionId: string,
  event: BetaManagedAgentsUserDefineOutcomeEventParams,
): Promise<{ echo: WireEvent; events: WireEvent[] }> {
  const from = reader.events.length;
  const sent = await t.client.beta.sessions.events.send(sessionId, { events: [event] });
  const echo = sent.data?.[0] as unknown as WireEvent;
  const start = await reader.until((e) => e.id === echo.id, { from });
  const end = await reader.until(isEndTurnIdle, { from: reader.events.indexOf(start), timeoutMs: 20_000 });
  return { echo, events: reader.events.slice(reader.events.indexOf(start), reader.events.indexOf(end) + 1) };
}

/** A refused call: a 400 in the wire's envelope, its message naming what to fix. */
function refused(call: Promise<unknown>, ...message: RegExp[]) {
  return expectApiError(call, Anthropic.BadRequestError, { ...BAD_REQUEST, message });
}

const spans = (events: WireEvent[]) => events.filter((e) => e.type.startsWith("span.outcome_evaluation_"));

async function evaluations(
  t: TestServer,
  sessionId: string,
): Promise<BetaManagedAgentsOutcomeEvaluationResource[]> {
  return (await t.client.beta.sessions.retrieve(sessionId)).outcome_evaluations;
}

// PostgreSQL is left out only outside CI without a test database (postgresFixtures.ts).
const RUNNABLE = BACKENDS.filter((b) => b.name !== "PostgreSQL" || postgresUnavailable() === null);

describe.each(RUNNABLE)("outcomes on $name", (backend) => {
  let t: TestServer;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ server: t, dispose } = await backend.start());
  });
  afterAll(async () => {
    await dispose?.();
  });
  afterEach(() => {
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
  });

  it("grades needs_revision once, feeds the feedback back to the agent, then satisfied", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const { echo, events } = await defineAndSettle(
      t,
      reader,
      session.id,
      outcome("Write a line about the season.", "The answer must mention `autumn leaves`."),
    );
    await reader.close();
    expect(echo).toMatchObject({
      type: "user.define_outcome",
      description: "Write a line about the season.",
      rubric: { type: "text", content: "The answer must mention `autumn leaves`." },
      max_iterations: null,
    });
    const outcomeId = echo.outcome_id as string;
    expect(outcomeId).toMatch(/^outc_/);

    // The attempt, its evaluation, the revision the feedback asked for, its evaluation, the idle.
    expect(events.map((e) => e.type)).toEqual([
      "user.define_outcome",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "span.outcome_evaluation_start",
      "span.outcome_evaluation_end",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "span.outcome_evaluation_start",
      "span.outcome_evaluation_end",
      "session.status_idle",
    ]);
    const [start0, end0, start1, end1] = spans(events);
    expect(start0).toMatchObject({ outcome_id: outcomeId, iteration: 0 });
    expect(end0).toMatchObject({
      outcome_id: outcomeId,
      iteration: 0,
      outcome_evaluation_start_id: start0?.id,
      result: "needs_revision",
      explanation: "The attempt does not include `autumn leaves`, which the rubric requires.",
    });
    expect((end0?.usage as { output_tokens: number } | undefined)?.output_tokens).toBeGreaterThan(0);
    expect(start1).toMatchObject({ outcome_id: outcomeId, iteration: 1 });
    expect(end1).toMatchObject({
      iteration: 1,
      outcome_evaluation_start_id: start1?.id,
      result: "satisfied",
    });
    // The agent read the task, then the grader's feedback (the offline model repeats what it is told).
    const [first, revised] = events.filter((e) => e.type === "agent.message");
    expect(textOf(first)).toContain("Write a line about the season.");
    expect(textOf(first)).not.toContain("autumn leaves");
    expect(textOf(revised)).toContain("needs revision");
    expect(textOf(revised)).toContain("autumn leaves");

    const [evaluation] = await evaluations(t, session.id);
    expect(evaluation).toMatchObject({
      type: "outcome_evaluation",
      outcome_id: outcomeId,
      description: "Write a line about the season.",
      iteration: 1,
      result: "satisfied",
      explanation: end1?.explanation,
    });
    expect(evaluation?.completed_at).toMatch(RFC3339);
    // History holds exactly what the stream showed: one verdict per start.
    const stored = spans(await history(t.client, session.id));
    expect(stored.map((e) => e.id)).toEqual(spans(events).map((e) => e.id));
  });

  it("ends with max_iterations_reached after the allowed evaluations, then one acknowledgment turn", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const { echo, events } = await defineAndSettle(
      t,
      reader,
      session.id,
      outcome("Say something.", "offline-verdict: needs_revision", 2),
    );
    await reader.close();
    expect(echo.max_iterations).toBe(2);
    expect(spans(events).map((e) => [e.type, e.iteration, e.result])).toEqual([
      ["span.outcome_evaluation_start", 0, undefined],
      ["span.outcome_evaluation_end", 0, "needs_revision"],
      ["span.outcome_evaluation_start", 1, undefined],
      ["span.outcome_evaluation_end", 1, "max_iterations_reached"],
    ]);
    // After the last verdict: one more answer (the acknowledgment), no evaluation, the idle.
    const last = spans(events).at(-1) as WireEvent;
    const after = events.slice(events.indexOf(last) + 1);
    expect(after.filter((e) => e.type === "agent.message")).toHaveLength(1);
    expect(textOf(after.find((e) => e.type === "agent.message"))).toContain("evaluations ran out");
    expect(stopReason(after.at(-1))).toEqual({ type: "end_turn" });
    expect(await evaluations(t, session.id)).toMatchObject([
      { outcome_id: echo.outcome_id, iteration: 1, result: "max_iterations_reached" },
    ]);
  });

  it("a grader whose answer holds no verdict ends the outcome as failed", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const { events } = await defineAndSettle(
      t,
      reader,
      session.id,
      outcome("Say something.", "offline-verdict: unreadable"),
    );
    await reader.close();
    const [, end] = spans(events);
    expect(end).toMatchObject({ iteration: 0, result: "failed" });
    expect(end?.explanation).toMatch(/no verdict that could be read/);
    // A failed outcome is over: the turn ends without another attempt.
    expect(events.filter((e) => e.type === "agent.message")).toHaveLength(1);
    const [evaluation] = await evaluations(t, session.id);
    expect(evaluation).toMatchObject({ result: "failed", iteration: 0 });
    expect(evaluation?.completed_at).toMatch(RFC3339);
  });

  it("an interrupt while the grader works ends the evaluation as interrupted, and the session idles", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    // Every word the offline model streams now waits: the grader's answer takes seconds.
    process.env.AWAKEN_OFFLINE_DELAY_MS = "150";
    const sent = await t.client.beta.sessions.events.send(session.id, {
      events: [outcome("Hi.", "offline-verdict: satisfied")],
    });
    const echo = sent.data?.[0] as unknown as WireEvent;
    const start = await reader.until((e) => e.type === "span.outcome_evaluation_start", {
      timeoutMs: 20_000,
    });
    // The grader is still at work: its heartbeat says so.
    await reader.until((e) => e.type === "span.outcome_evaluation_ongoing", { timeoutMs: 5_000 });
    const from = reader.events.length;
    await t.client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
    const idle = await reader.until((e) => e.type === "session.status_idle", { from });
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
    const end = reader.events.find((e) => e.type === "span.outcome_evaluation_end");
    expect(end).toMatchObject({
      outcome_id: echo.outcome_id,
      outcome_evaluation_start_id: start.id,
      iteration: 0,
      result: "interrupted",
    });
    expect(stopReason(idle)).toEqual({ type: "end_turn" });
    // Outlive the grader's answer: had it kept running, its verdict would have landed by now.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await reader.close();
    const stored = spans(await history(t.client, session.id)).filter(
      (e) => e.type !== "span.outcome_evaluation_ongoing",
    );
    expect(stored.map((e) => [e.type, e.result])).toEqual([
      ["span.outcome_evaluation_start", undefined],
      ["span.outcome_evaluation_end", "interrupted"],
    ]);
    expect(await evaluations(t, session.id)).toMatchObject([{ result: "interrupted", iteration: 0 }]);
  });

  it("refuses bad definitions with clear 400s, and resolves a file rubric of the caller's to its text", async () => {
    const { session } = await createSession(t.client);
    const send = (event: unknown) =>
      t.client.beta.sessions.events.send(session.id, {
        events: [event as BetaManagedAgentsUserDefineOutcomeEventParams],
      });
    await refused(send({ ...outcome("x", "y"), max_iterations: 0 }), /max_iterations/);
    await refused(send({ ...outcome("x", "y"), max_iterations: 21 }), /max_iterations/);
    await refused(send({ ...outcome("x", "y"), rubric: { type: "text", content: "" } }));
    await refused(
      send({ ...outcome("x", "y"), rubric: { type: "file", file_id: "file_missing" } }),
      /rubric\.file_id: file "file_missing" cannot be used as a rubric/,
    );
    const binary = await t.client.beta.files.upload({
      file: await toFile(Buffer.from([0xff, 0xfe, 0x00, 0x80]), "rubric.bin"),
    });
    await refused(
      send({ ...outcome("x", "y"), rubric: { type: "file", file_id: binary.id } }),
      /is not UTF-8 text/,
    );
    // Nothing was stored by the refused sends.
    expect((await history(t.client, session.id)).filter((e) => e.type === "user.define_outcome")).toEqual([]);

    const rubric = await t.client.beta.files.upload({
      file: await toFile(Buffer.from("offline-verdict: satisfied\n"), "rubric.md", { type: "text/markdown" }),
    });
    const reader = await StreamReader.open(t.client, session.id);
    const { echo, events } = await defineAndSettle(t, reader, session.id, {
      type: "user.define_outcome",
      description: "Anything.",
      rubric: { type: "file", file_id: rubric.id },
    });
    expect(echo.rubric).toEqual({ type: "text", content: "offline-verdict: satisfied\n" });
    expect(spans(events).at(-1)).toMatchObject({ result: "satisfied" });

    // One outcome at a time: a second while one is in progress is refused.
    process.env.AWAKEN_OFFLINE_DELAY_MS = "50";
    await send(outcome("First.", "offline-verdict: satisfied"));
    await refused(send(outcome("Second.", "offline-verdict: satisfied")), /still in progress/);
    await reader.until((e) => e.type === "span.outcome_evaluation_end" && e.result === "satisfied", {
      from: reader.events.indexOf(events.at(-1) as WireEvent) + 1,
      timeoutMs: 20_000,
    });
    await reader.close();
    const list = await t.client.beta.sessions.list();
    const listed = list.data.find((s) => s.id === session.id);
    expect(listed?.outcome_evaluations.map((o) => o.result)).toEqual(["satisfied", "satisfied"]);
  });

  it("takes an outcome among a new session's initial events", async () => {
    const created = await t.client.beta.sessions.create({
      agent: (await createSession(t.client)).session.agent.id,
      environment_id: (await t.client.beta.sessions.list()).data[0]?.environment_id as string,
      initial_events: [outcome("Begin.", "offline-verdict: satisfied")],
    });
    expect(created.outcome_evaluations).toMatchObject([{ description: "Begin.", iteration: 0 }]);
    expect(["running", "evaluating", "satisfied"]).toContain(created.outcome_evaluations[0]?.result);
  });
});
