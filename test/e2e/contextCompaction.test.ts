/**
 * Context compaction end to end: the official SDK over real HTTP against a real server on SQLite
 * and PostgreSQL, the model played by the scripted fake Anthropic server, and context windows made
 * small through AWAKEN_CONTEXT_WINDOWS so a few turns outgrow them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUMMARIZER_SYSTEM } from "../../src/runtime/summaryRequest.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer, RecordedRequest } from "../support/fakeModelScript.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  history,
  isEndTurnIdle,
  runTurn,
  StreamReader,
  stopReason,
  textOf,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

/** 4,096 tokens are the answer's room: 504 are left for the conversation (~3 turns of 150). */
const ROOMY = "claude-sonnet-4-6";
/** 104 tokens for the conversation: one question, or one summary, does not fit. */
const CRAMPED = "claude-haiku-4-5";
/** Roomy's window for an agent whose system prompt alone takes more than the room left. */
const CROWDED = "claude-opus-4-6";
/** The offline model under an id of its own, with the roomy window. */
const OFFLINE = "offline-compacting";
const WINDOWS = `${ROOMY}=4600,${CRAMPED}=4200,${CROWDED}=4600,${OFFLINE}=4600`;

const FILLER = " lorem".repeat(95);
/** A question of about 150 estimated tokens, tagged so a request shows which turns it holds. */
const question = (n: number) => `turn ${n}:${FILLER}`;
const SUMMARY = "SUMMARY: the user sent lorem turns 1 to 3 and was answered each time.";
/** A summary too long for the cramped window: the compactions never make the view fit. */
const LONG_SUMMARY = `LONG SUMMARY:${" ipsum".repeat(100)}`;

const BACKENDS = [
  { name: "SQLite", unavailable: () => null, databaseUrl: async () => undefined },
  {
    name: "PostgreSQL",
    unavailable: postgresUnavailable,
    databaseUrl: async () => {
      const schema = await emptySchema();
      drops.push(() => schema.drop());
      return schema.url;
    },
  },
] as const;
const drops: Array<() => Promise<void>> = [];

const isSummarization = (request: RecordedRequest) => request.body.system === SUMMARIZER_SYSTEM;
const bodyText = (request: RecordedRequest | undefined) => JSON.stringify(request?.body.messages ?? null);

for (const backend of BACKENDS) {
  describe.skipIf(backend.unavailable() !== null)(`context compaction on ${backend.name}`, () => {
    let fake: FakeModelServer;
    let t: TestServer;
    let answered = 0;
    beforeAll(async () => {
      fake = await startFakeAnthropic();
      // Summarization requests get a scripted summary; other requests a short answer.
      fake.setFallback((body) =>
        body.system === SUMMARIZER_SYSTEM
          ? { kind: "text", text: body.model === CRAMPED ? LONG_SUMMARY : SUMMARY }
          : { kind: "text", text: `ok ${++answered}` },
      );
      t = await startTestServer({
        databaseUrl: await backend.databaseUrl(),
        env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, AWAKEN_CONTEXT_WINDOWS: WINDOWS },
      });
    });
    afterAll(async () => {
      await t?.close();
      await fake?.close();
      for (const drop of drops.splice(0)) await drop();
    });

    async function session(model: string, system?: string) {
      const agent = await t.client.beta.agents.create({
        name: "compacting",
        model,
        ...(system === undefined ? {} : { system }),
      });
      const environment = await t.client.beta.environments.create({ name: "compaction" });
      return t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    }

    it("summarizes the older turns once the conversation outgrows the window, and asks with the summary after", async () => {
      const s = await session(ROOMY);
      const reader = await StreamReader.open(t.client, s.id);
      const firstRequest = fake.requests.length;
      for (const n of [1, 2, 3]) {
        const turn = await runTurn(t.client, reader, s.id, question(n));
        expect(turn.some((e) => e.type === "agent.thread_context_compacted")).toBe(false);
      }
      // Three turns fit: every request so far held the whole conversation.
      expect(fake.requests.slice(firstRequest).some(isSummarization)).toBe(false);
      expect(bodyText(fake.requests.at(-1))).toContain("turn 1:");

      const beforeFourth = fake.requests.length;
      const fourth = await runTurn(t.client, reader, s.id, question(4));
      const compacted = fourth.filter((e) => e.type === "agent.thread_context_compacted");
      expect(compacted).toHaveLength(1);
      // The wire event is exactly what the SDK declares: no summary, no boundary.
      expect(Object.keys(compacted[0] as WireEvent).sort()).toEqual(["id", "processed_at", "type"]);
      // The compaction lands before the answer it made room for.
      const answer = fourth.findIndex((e) => e.type === "agent.message");
      expect(fourth.indexOf(compacted[0] as WireEvent)).toBeLessThan(answer);

      const [summarization, asked, ...more] = fake.requests.slice(beforeFourth);
      expect(more).toEqual([]);
      // The summary is the model's own, in a request of its own that was sent the older turns.
      expect(summarization && isSummarization(summarization)).toBe(true);
      expect(bodyText(summarization)).toContain("turn 1:");
      expect(summarization?.body.tools).toBeUndefined();
      // The answer's request holds the summary and the newest turn, not the older turns.
      expect(asked && isSummarization(asked)).toBe(false);
      expect(bodyText(asked)).toContain(SUMMARY);
      expect(bodyText(asked)).toContain("turn 4:");
      for (const old of ["turn 1:", "turn 2:", "turn 3:"]) expect(bodyText(asked)).not.toContain(old);

      // A later turn reads the compacted view too, without compacting again.
      const beforeFifth = fake.requests.length;
      const fifth = await runTurn(t.client, reader, s.id, question(5));
      expect(fifth.some((e) => e.type === "agent.thread_context_compacted")).toBe(false);
      const [later, ...rest] = fake.requests.slice(beforeFifth);
      expect(rest).toEqual([]);
      expect(bodyText(later)).toContain(SUMMARY);
      expect(bodyText(later)).toContain("turn 4:");
      expect(bodyText(later)).toContain("turn 5:");
      expect(bodyText(later)).not.toContain("turn 1:");
      await reader.close();

      // The committed history is listed whole: every question, every answer and the compaction.
      const listed = await history(t.client, s.id);
      const questions = listed.filter((e) => e.type === "user.message");
      expect(questions.map((e) => JSON.stringify(e.content))).toEqual(
        [1, 2, 3, 4, 5].map((n) => JSON.stringify([{ type: "text", text: question(n) }])),
      );
      expect(listed.filter((e) => e.type === "agent.message")).toHaveLength(5);
      expect(listed.filter((e) => e.type === "agent.thread_context_compacted").map((e) => e.id)).toEqual([
        compacted[0]?.id,
      ]);
      // The type filter finds it as any other event type.
      const filtered = [];
      for await (const e of t.client.beta.sessions.events.list(s.id, {
        types: ["agent.thread_context_compacted"],
      }))
        filtered.push(e);
      expect(filtered.map((e) => e.id)).toEqual([compacted[0]?.id]);
    });

    it("compacts with the offline model too, and answers from the compacted view", async () => {
      const s = await session(OFFLINE);
      const reader = await StreamReader.open(t.client, s.id);
      const before = fake.requests.length;
      // The offline model echoes each question (~130 tokens): two turns fit, the third does not.
      let earlier: WireEvent[] = [];
      for (const n of [1, 2]) {
        earlier = await runTurn(t.client, reader, s.id, question(n));
        expect(earlier.some((e) => e.type === "agent.thread_context_compacted")).toBe(false);
      }
      const third = await runTurn(t.client, reader, s.id, question(3));
      await reader.close();
      expect(third.filter((e) => e.type === "agent.thread_context_compacted")).toHaveLength(1);
      // The offline model echoes the user turn it was sent: it opened with the summary.
      const answer = third.find((e) => e.type === "agent.message");
      expect(textOf(answer)).toMatch(
        /^\[offline model\] You said: \[summary of the earlier conversation\]\n/,
      );
      // The summarization request's tokens are counted in the session's usage: the compaction
      // commits a total above the previous turn's, before the answer adds its own.
      const usage = third.filter((e) => e.type === "session.usage");
      expect(usage).toHaveLength(2);
      const inputOf = (e: WireEvent | undefined) =>
        (e?.usage as { input_tokens?: number } | undefined)?.input_tokens ?? 0;
      const third0 = third.findIndex((e) => e.type === "agent.thread_context_compacted");
      expect(third.indexOf(usage[0] as WireEvent)).toBe(third0 + 1);
      expect(inputOf(usage[0])).toBeGreaterThan(inputOf(earlier.findLast((e) => e.type === "session.usage")));
      expect(inputOf(usage[1])).toBeGreaterThan(inputOf(usage[0]));
      const retrieved = await t.client.beta.sessions.retrieve(s.id);
      expect(retrieved.usage?.input_tokens).toBe(inputOf(usage[1]));
      expect(fake.requests.length).toBe(before);
    });

    it("ends the turn at once when the system prompt leaves no room for any message", async () => {
      const s = await session(CROWDED, `Be brief.${" Really.".repeat(400)}`);
      const reader = await StreamReader.open(t.client, s.id);
      const before = fake.requests.length;
      const turn = await runTurn(t.client, reader, s.id, "hello", (e) => e.type === "session.status_idle");
      await reader.close();
      expect(fake.requests.length).toBe(before);
      expect(turn.some((e) => e.type === "agent.thread_context_compacted")).toBe(false);
      const error = turn.find((e) => e.type === "session.error") as WireEvent & {
        error: { type: string; message: string; retry_status: { type: string } };
      };
      expect(error.error).toMatchObject({
        type: "compaction_limit_reached_error",
        retry_status: { type: "exhausted" },
      });
      expect(error.error.message).toContain("system prompt");
      expect(stopReason(turn.at(-1))).toEqual({ type: "retries_exhausted" });
    });

    it("ends the turn with compaction_limit_reached_error when compacting cannot make the view fit", async () => {
      const s = await session(CRAMPED);
      const reader = await StreamReader.open(t.client, s.id);
      const before = fake.requests.length;
      const turn = await runTurn(
        t.client,
        reader,
        s.id,
        question(1),
        (e) => e.type === "session.status_idle",
      );
      await reader.close();
      // The maximum number of compactions in a row, each through the model, then no answer request.
      expect(turn.filter((e) => e.type === "agent.thread_context_compacted")).toHaveLength(3);
      const sent = fake.requests.slice(before);
      expect(sent).toHaveLength(3);
      expect(sent.every(isSummarization)).toBe(true);

      const error = turn.find((e) => e.type === "session.error") as WireEvent & {
        error: { type: string; message: string; retry_status: { type: string } };
      };
      expect(error.error.type).toBe("compaction_limit_reached_error");
      expect(error.error.retry_status).toEqual({ type: "exhausted" });
      expect(error.error.message).toContain("compacted 3 times in a row");
      const idle = turn.at(-1);
      expect(stopReason(idle)).toEqual({ type: "retries_exhausted" });
      expect(isEndTurnIdle(idle as WireEvent)).toBe(false);
      const retrieved = await t.client.beta.sessions.retrieve(s.id);
      expect(retrieved.status).toBe("idle");
    });
  });
}
