import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAllInOne } from "../../src/cli/allInOne.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer, ScriptedReply } from "../support/fakeModelScript.js";
import { startFakeOpenAI } from "../support/fakeOpenAIServer.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// Transient and permanent model failures, end to end: the fake fails, the server records every
// attempt, backs off, retries, and gives up after DEFAULT_RETRY_POLICY.maxRetries.

type Ev = { id: string; type: string } & Record<string, unknown>;

let anthropic: FakeModelServer;
let openai: FakeModelServer;
let t: TestServer;
let environmentId: string;
let slow: { client: Anthropic; environmentId: string; close(): Promise<void> };

const env = () => ({
  ANTHROPIC_API_KEY: "k",
  ANTHROPIC_BASE_URL: anthropic.url,
  OPENAI_API_KEY: "ok",
  OPENAI_BASE_URL: openai.url,
});

/** The real server on `dataDir`, with a retry backoff of its own. */
async function startServer(dataDir: string, retryMs: number) {
  const server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 2,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: TEST_API_KEY,
      retry: { baseDelayMs: retryMs, maxDelayMs: retryMs },
      env: env(),
    },
    pino({ level: "silent" }),
  );
  return { server, client: new Anthropic({ baseURL: server.url, apiKey: TEST_API_KEY, maxRetries: 0 }) };
}

/**
 * The shared test server caps backoff at 50 ms, too short to watch; this one waits 150-300 ms per
 * retry so the `rescheduling` status can be observed from outside.
 */
async function startSlowRetryServer(): Promise<typeof slow> {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-retry-"));
  const { server, client } = await startServer(dataDir, 300);
  const environment = await client.beta.environments.create({ name: "slow-retries" });
  return {
    client,
    environmentId: environment.id,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  openai = await startFakeOpenAI();
  t = await startTestServer({ env: env() });
  environmentId = (await t.client.beta.environments.create({ name: "retries" })).id;
  slow = await startSlowRetryServer();
});

afterAll(async () => {
  await slow?.close();
  await t?.close();
  await anthropic?.close();
  await openai?.close();
});

async function newSession(model: string, client = t.client, envId = environmentId): Promise<string> {
  const agent = await client.beta.agents.create({ name: "Retrier", model });
  return (await client.beta.sessions.create({ agent: agent.id, environment_id: envId })).id;
}

async function history(sessionId: string, client = t.client): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const event of client.beta.sessions.events.list(sessionId)) events.push(event as unknown as Ev);
  return events;
}

async function waitForHistory(
  sessionId: string,
  done: (events: Ev[]) => boolean,
  client = t.client,
): Promise<Ev[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = await history(sessionId, client);
    if (done(events)) return events;
    if (Date.now() > deadline)
      throw new Error(`history never matched: ${events.map((e) => e.type).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const idles = (events: Ev[]) => events.filter((e) => e.type === "session.status_idle");
const untilIdles = (count: number) => (events: Ev[]) => idles(events).length >= count;
const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);
const errorOf = (event: Ev | undefined) =>
  event?.error as { type: string; message: string; retry_status: unknown };

async function say(sessionId: string, text: string, client = t.client): Promise<void> {
  await client.beta.sessions.events.send(sessionId, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
}

/** One failed attempt, as history records it, followed by the retry's start. */
const RETRIED_ATTEMPT = [
  "span.model_request_start",
  "span.model_request_end",
  "session.error",
  "session.status_rescheduled",
  "session.status_running",
];
const ANSWER = [
  "span.model_request_start",
  "agent.message",
  "span.model_request_end",
  "session.usage",
  "session.status_idle",
];

async function failOnceThenAnswer(model: string, fake: FakeModelServer, failure: ScriptedReply) {
  const sessionId = await newSession(model);
  const before = fake.requests.length;
  fake.enqueue(failure, { kind: "text", text: "the answer" });
  await say(sessionId, "question");
  const events = await waitForHistory(sessionId, untilIdles(1));
  expect(events.map((e) => e.type)).toEqual([
    "user.message",
    "session.status_running",
    ...RETRIED_ATTEMPT,
    ...ANSWER,
  ]);
  const [failedStart, retryStart] = ofType(events, "span.model_request_start");
  expect(ofType(events, "span.model_request_end")[0]).toMatchObject({
    model_request_start_id: failedStart?.id,
    is_error: true,
  });
  expect(ofType(events, "span.model_request_end")[1]).toMatchObject({
    model_request_start_id: retryStart?.id,
    is_error: false,
  });
  expect(ofType(events, "agent.message").map((e) => e.content)).toEqual([
    [{ type: "text", text: "the answer" }],
  ]);
  expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });
  expect(fake.requests.length).toBe(before + 2);
  // The retry asks exactly the same question again.
  expect(fake.requests[before + 1]?.body.messages).toEqual(fake.requests[before]?.body.messages);
  return errorOf(ofType(events, "session.error")[0]);
}

describe("transient model errors are retried", () => {
  it("529 overloaded → session.error retrying, rescheduled, running, then the answer", async () => {
    const error = await failOnceThenAnswer("claude-sonnet-4-6", anthropic, { kind: "error", status: 529 });
    expect(error).toMatchObject({ type: "model_overloaded_error", retry_status: { type: "retrying" } });
    expect(error.message).toContain("overloaded");
  });

  it("429 → model_rate_limited_error (Anthropic and OpenAI)", async () => {
    const fromAnthropic = await failOnceThenAnswer("claude-sonnet-4-6", anthropic, {
      kind: "error",
      status: 429,
    });
    expect(fromAnthropic).toMatchObject({
      type: "model_rate_limited_error",
      retry_status: { type: "retrying" },
    });
    const fromOpenAI = await failOnceThenAnswer("gpt-4o-mini", openai, { kind: "error", status: 429 });
    expect(fromOpenAI).toMatchObject({
      type: "model_rate_limited_error",
      retry_status: { type: "retrying" },
    });
  });

  it("a stream that dies mid-answer is retried and its partial text never becomes an agent.message", async () => {
    for (const [model, fake] of [
      ["claude-sonnet-4-6", anthropic],
      ["gpt-4o-mini", openai],
    ] as const) {
      const dropped = await failOnceThenAnswer(model, fake, {
        kind: "drop",
        text: "partial words that never end",
      });
      expect(dropped).toMatchObject({
        type: "model_request_failed_error",
        retry_status: { type: "retrying" },
      });
      const errored = await failOnceThenAnswer(model, fake, { kind: "stream_error", text: "partial words" });
      expect(errored.retry_status).toEqual({ type: "retrying" });
    }
  });

  it("a dropped stream's preview never becomes a message; the retry previews and commits its own", async () => {
    const sessionId = await newSession("claude-sonnet-4-6");
    anthropic.enqueue(
      { kind: "drop", text: "partial words that never end" },
      { kind: "text", text: "whole answer" },
    );
    const stream = await t.client.beta.sessions.events.stream(sessionId, { event_deltas: ["agent.message"] });
    await say(sessionId, "question");
    const seen: Ev[] = [];
    for await (const event of stream) {
      seen.push(event as unknown as Ev);
      if (event.type === "session.status_idle") break;
    }
    const previews = seen.filter((e) => e.type === "event_start").map((e) => (e.event as { id: string }).id);
    expect(previews).toHaveLength(2);
    const messages = ofType(seen, "agent.message");
    expect(messages.map((m) => m.id)).toEqual([previews[1]]);
    expect(messages[0]?.content).toEqual([{ type: "text", text: "whole answer" }]);
    const abandonedText = seen
      .filter((e) => e.type === "event_delta" && e.event_id === previews[0])
      .map((e) => (e.delta as { content: { text: string } }).content.text)
      .join("");
    expect("partial words that never end".startsWith(abandonedText)).toBe(true);
    // The failed request's end comes after the abandoned preview and before the retry's preview.
    const types = seen.map((e) => e.type);
    expect(types.indexOf("span.model_request_end")).toBeLessThan(
      seen.findIndex((e) => e.type === "event_start" && (e.event as { id: string }).id === previews[1]),
    );
  });

  it("reports rescheduling while it backs off, and running again once it retries", async () => {
    const sessionId = await newSession("claude-sonnet-4-6", slow.client, slow.environmentId);
    anthropic.enqueue({ kind: "error", status: 529 }, { kind: "text", text: "after the wait" });
    await say(sessionId, "question", slow.client);
    await waitForHistory(sessionId, (evs) => evs.at(-1)?.type === "session.status_rescheduled", slow.client);
    expect((await slow.client.beta.sessions.retrieve(sessionId)).status).toBe("rescheduling");
    const events = await waitForHistory(sessionId, untilIdles(1), slow.client);
    expect(events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      ...RETRIED_ATTEMPT,
      ...ANSWER,
    ]);
    expect((await slow.client.beta.sessions.retrieve(sessionId)).status).toBe("idle");
  });

  it("a message sent during the backoff is answered by the retry, and the session reads running again", async () => {
    const sessionId = await newSession("claude-sonnet-4-6", slow.client, slow.environmentId);
    const before = anthropic.requests.length;
    anthropic.enqueue({ kind: "error", status: 529 }, { kind: "text", text: "both answered" });
    await say(sessionId, "first", slow.client);
    await waitForHistory(sessionId, (evs) => evs.at(-1)?.type === "session.status_rescheduled", slow.client);
    await say(sessionId, "second", slow.client);
    const events = await waitForHistory(sessionId, untilIdles(1), slow.client);
    // The queued message does not restart the run; the retry's status_running still lands after it.
    expect(events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "span.model_request_end",
      "session.error",
      "session.status_rescheduled",
      "user.message",
      "session.status_running",
      ...ANSWER,
    ]);
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });
    expect(anthropic.requests[before + 1]?.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
    ]);
  });
});

describe("when retrying does not help", () => {
  const failures = DEFAULT_RETRY_POLICY.maxRetries + 1;

  it(`${failures} failures in a row exhaust the retries; the next message starts afresh`, async () => {
    const sessionId = await newSession("claude-sonnet-4-6");
    const before = anthropic.requests.length;
    for (let i = 0; i < failures; i++) anthropic.enqueue({ kind: "error", status: 529 });
    await say(sessionId, "doomed");
    const events = await waitForHistory(sessionId, untilIdles(1));
    expect(anthropic.requests.length).toBe(before + failures);
    const errors = ofType(events, "session.error").map(errorOf);
    expect(errors).toHaveLength(failures);
    expect(errors.slice(0, -1).every((e) => (e.retry_status as { type: string }).type === "retrying")).toBe(
      true,
    );
    expect(errors.at(-1)).toMatchObject({
      type: "model_overloaded_error",
      retry_status: { type: "exhausted" },
    });
    expect(ofType(events, "session.status_rescheduled")).toHaveLength(failures - 1);
    expect(ofType(events, "span.model_request_end").every((e) => e.is_error === true)).toBe(true);
    expect(ofType(events, "agent.message")).toHaveLength(0);
    expect(events.at(-1)?.type).toBe("session.status_idle");
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "retries_exhausted" });
    expect((await t.client.beta.sessions.retrieve(sessionId)).status).toBe("idle");

    anthropic.enqueue({ kind: "text", text: "back in business" });
    await say(sessionId, "try again");
    const after = await waitForHistory(sessionId, untilIdles(2));
    expect(after.slice(events.length).map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      ...ANSWER,
    ]);
    expect(idles(after)[1]?.stop_reason).toEqual({ type: "end_turn" });
    const messages = (anthropic.requests.at(-1)?.body.messages ?? []) as Array<{
      content: Array<{ text: string }>;
    }>;
    expect(messages.at(-1)?.content.at(-1)?.text).toBe("try again");
  });

  it("messages queued during the retries do not reset the count of consecutive failures", async () => {
    const sessionId = await newSession("claude-sonnet-4-6", slow.client, slow.environmentId);
    const before = anthropic.requests.length;
    for (let i = 0; i < failures; i++) anthropic.enqueue({ kind: "error", status: 529 });
    await say(sessionId, "doomed", slow.client);
    await waitForHistory(sessionId, (evs) => evs.at(-1)?.type === "session.status_rescheduled", slow.client);
    await say(sessionId, "are you there?", slow.client);
    const events = await waitForHistory(sessionId, untilIdles(1), slow.client);
    expect(anthropic.requests.length).toBe(before + failures);
    expect(errorOf(ofType(events, "session.error").at(-1)).retry_status).toEqual({ type: "exhausted" });
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "retries_exhausted" });
  });

  it("a 400 from the provider fails the turn at once: model_request_failed_error, exhausted", async () => {
    const sessionId = await newSession("claude-sonnet-4-6");
    const before = anthropic.requests.length;
    anthropic.enqueue({ kind: "error", status: 400, message: "messages: field required" });
    await say(sessionId, "bad request");
    const events = await waitForHistory(sessionId, untilIdles(1));
    expect(events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "span.model_request_end",
      "session.error",
      "session.status_idle",
    ]);
    expect(anthropic.requests.length).toBe(before + 1);
    const error = errorOf(ofType(events, "session.error")[0]);
    expect(error).toMatchObject({ type: "model_request_failed_error", retry_status: { type: "exhausted" } });
    expect(error.message).toContain("messages: field required");
    expect(ofType(events, "span.model_request_end")[0]?.is_error).toBe(true);
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "retries_exhausted" });
  });
});

describe("a request its worker never finished", () => {
  it("leaves nothing in history; the next owner asks the model again", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-dangling-"));
    try {
      const first = await startServer(dataDir, 10);
      const envId = (await first.client.beta.environments.create({ name: "dangling" })).id;
      const sessionId = await newSession("claude-sonnet-4-6", first.client, envId);
      const before = anthropic.requests.length;
      anthropic.enqueue({ kind: "hang" });
      await say(sessionId, "question", first.client);
      await anthropic.waitForRequests(before + 1);
      // Shutdown abandons the hanging request and hands the run back. Its span would have been
      // committed with its answer: nothing of it is in history.
      anthropic.enqueue({ kind: "text", text: "answered by the next owner" });
      await first.server.stop();

      const second = await startServer(dataDir, 10);
      try {
        const events = await waitForHistory(sessionId, untilIdles(1), second.client);
        expect(events.map((e) => e.type)).toEqual(["user.message", "session.status_running", ...ANSWER]);
        expect(ofType(events, "span.model_request_start")[0]).toMatchObject({
          provider: "anthropic",
          model: "claude-sonnet-4-6",
        });
        expect(ofType(events, "span.model_request_end")[0]?.is_error).toBe(false);
        expect(ofType(events, "agent.message")[0]?.content).toEqual([
          { type: "text", text: "answered by the next owner" },
        ]);
        expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });
        expect(anthropic.requests.length).toBe(before + 2);
      } finally {
        await second.server.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("committed before the request by an older version (a start without an end) is closed as failed by the next owner, which asks the model again", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-dangling-"));
    try {
      const first = await startServer(dataDir, 10);
      const envId = (await first.client.beta.environments.create({ name: "dangling" })).id;
      const sessionId = await newSession("claude-sonnet-4-6", first.client, envId);
      const before = anthropic.requests.length;
      anthropic.enqueue({ kind: "hang" });
      await say(sessionId, "question", first.client);
      await anthropic.waitForRequests(before + 1);
      anthropic.enqueue({ kind: "text", text: "answered by the next owner" });
      await first.server.stop();
      // The history an older version left: its span start committed before the request, no end.
      const planted = plantOpenSpanStart(dataDir, sessionId, "claude-sonnet-4-6");

      const second = await startServer(dataDir, 10);
      try {
        const events = await waitForHistory(sessionId, untilIdles(1), second.client);
        expect(events.map((e) => e.type)).toEqual([
          "user.message",
          "session.status_running",
          "span.model_request_start",
          "span.model_request_end",
          ...ANSWER,
        ]);
        const [abandoned, retried] = ofType(events, "span.model_request_start");
        expect(abandoned?.id).toBe(planted);
        expect(ofType(events, "span.model_request_end")[0]).toMatchObject({
          model_request_start_id: planted,
          is_error: true,
          provider: "anthropic",
          model: "claude-sonnet-4-6",
        });
        expect(retried).toMatchObject({ provider: "anthropic" });
        expect(ofType(events, "agent.message")[0]?.content).toEqual([
          { type: "text", text: "answered by the next owner" },
        ]);
        expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });
        expect(anthropic.requests.length).toBe(before + 2);
      } finally {
        await second.server.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * Appends a `span.model_request_start` as versions before the late start committed it (before its
 * request, without `context_seq`) to a stopped server's SQLite history; returns its id.
 */
function plantOpenSpanStart(dataDir: string, sessionId: string, model: string): string {
  const db = new Database(join(dataDir, "awaken.db"));
  try {
    const id = "sevt_planted_open_span_start";
    db.transaction(() => {
      // A commit row on the thread's head, carrying the head's projection (a span moves none).
      const head = db
        .prepare(
          "select c.thread_id, c.version, c.status, c.pending_json, c.usage_json from commits c join sessions s on s.thread_id = c.thread_id where s.id = ? order by c.base_version desc limit 1",
        )
        .get(sessionId) as {
        thread_id: string;
        version: number;
        status: string;
        pending_json: string;
        usage_json: string;
      };
      const base = Number(head.version);
      db.prepare(
        "insert into commits (thread_id, base_version, version, session_id, facts_json, created_at, status, pending_json, usage_json) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ).run(
        head.thread_id,
        base,
        base + 1,
        sessionId,
        JSON.stringify([[id, "span.model_request_start", { provider: "anthropic", model }]]),
        Date.now(),
        head.status,
        head.pending_json,
        head.usage_json,
      );
    })();
    return id;
  } finally {
    db.close();
  }
}
