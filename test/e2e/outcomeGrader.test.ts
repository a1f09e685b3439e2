import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { graderReply, isGraderRequest, withGrader } from "../support/graderScript.js";
import { history, isEndTurnIdle, StreamReader, textOf, type WireEvent } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// The grader on a real provider wire: the product's Anthropic provider against the scripted fake
// server, which answers grader requests (told apart by the grader's system prompt) with scripted
// verdicts. What the grader is sent, and what a failing grader does to the outcome.

let fake: FakeModelServer;
let t: TestServer;
let client: Anthropic;
let environmentId: string;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({ env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
  client = t.client;
  environmentId = (await client.beta.environments.create({ name: "grader-e2e" })).id;
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function settleOutcome(rubric: string): Promise<{ sessionId: string; events: WireEvent[] }> {
  const agent = await client.beta.agents.create({
    name: "graded",
    model: "claude-sonnet-4-6",
    system: "You write short poems.",
  });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environmentId });
  const reader = await StreamReader.open(client, session.id);
  await client.beta.sessions.events.send(session.id, {
    events: [{ type: "user.message", content: [{ type: "text", text: "Warm up: say hi." }] }],
  });
  await reader.until(isEndTurnIdle);
  const from = reader.events.length;
  await client.beta.sessions.events.send(session.id, {
    events: [
      {
        type: "user.define_outcome",
        description: "A poem about rain.",
        rubric: { type: "text", content: rubric },
      },
    ],
  });
  await reader.until(isEndTurnIdle, { from, timeoutMs: 20_000 });
  const events = reader.events.slice(from);
  await reader.close();
  return { sessionId: session.id, events };
}

describe("the outcome grader on a provider", () => {
  it("is its own request: the grader prompt, the task, the rubric and the attempt, not the agent's conversation", async () => {
    fake.setFallback(
      withGrader(
        (n) =>
          n === 0
            ? graderReply("needs_revision", "Mention the smell of rain.")
            : graderReply("satisfied", "It mentions petrichor."),
        (body) => ({ kind: "text", text: `poem ${fake.requests.length}: ${JSON.stringify(body).length}` }),
      ),
    );
    const before = fake.requests.length;
    const { sessionId, events } = await settleOutcome("Must mention the smell of rain.");
    const requests = fake.requests.slice(before).map((r) => r.body);
    const graderRequests = requests.filter(isGraderRequest);
    expect(graderRequests).toHaveLength(2);
    for (const body of graderRequests) {
      // One user message and no tools: none of the agent's turns, prompt or tools reach the grader.
      const messages = body.messages as Array<{ role: string; content: unknown }>;
      expect(messages).toHaveLength(1);
      expect(body.tools ?? []).toEqual([]);
      const text = JSON.stringify(messages[0]?.content);
      expect(text).toContain("A poem about rain.");
      expect(text).toContain("Must mention the smell of rain.");
      expect(text).not.toContain("Warm up: say hi.");
      expect(text).not.toContain("You write short poems.");
    }
    // Each attempt is the agent's answer since the last verdict.
    const answers = events.filter((e) => e.type === "agent.message").map(textOf);
    expect(answers).toHaveLength(2);
    expect(JSON.stringify(graderRequests[0]?.messages)).toContain(JSON.stringify(answers[0]).slice(1, -1));
    expect(JSON.stringify(graderRequests[1]?.messages)).toContain(JSON.stringify(answers[1]).slice(1, -1));
    expect(JSON.stringify(graderRequests[1]?.messages)).not.toContain(
      JSON.stringify(answers[0]).slice(1, -1),
    );
    // The agent's second request carries the grader's feedback as its newest input.
    const agentRequests = requests.filter((body) => !isGraderRequest(body));
    expect(JSON.stringify(agentRequests.at(-1)?.messages)).toContain("Mention the smell of rain.");

    const ends = events.filter((e) => e.type === "span.outcome_evaluation_end");
    expect(ends.map((e) => [e.result, e.explanation])).toEqual([
      ["needs_revision", "Mention the smell of rain."],
      ["satisfied", "It mentions petrichor."],
    ]);
    // The grader's tokens are the evaluation's usage.
    for (const end of ends) expect((end.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect((await client.beta.sessions.retrieve(sessionId)).outcome_evaluations).toMatchObject([
      { result: "satisfied", iteration: 1, explanation: "It mentions petrichor." },
    ]);
  });

  it("a grader whose model request keeps failing ends the outcome as failed, once, and the session idles", async () => {
    fake.setFallback(
      withGrader(
        () => ({ kind: "error", status: 400, errorType: "invalid_request_error", message: "grader refused" }),
        () => ({ kind: "text", text: "a poem" }),
      ),
    );
    const { sessionId, events } = await settleOutcome("Must rhyme.");
    const ends = events.filter((e) => e.type === "span.outcome_evaluation_end");
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ result: "failed", iteration: 0 });
    expect(ends[0]?.explanation).toMatch(/model request failed/);
    // No secret or raw provider text in the verdict; the session is idle and takes new input.
    expect(ends[0]?.explanation).not.toContain("grader refused");
    expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("idle");
    const stored = (await history(client, sessionId)).filter((e) =>
      e.type.startsWith("span.outcome_evaluation"),
    );
    expect(stored.map((e) => e.type)).toEqual([
      "span.outcome_evaluation_start",
      "span.outcome_evaluation_end",
    ]);
  });

  it("transient grader failures are retried before a verdict", async () => {
    fake.setFallback(
      withGrader(
        (n) =>
          n < 2
            ? { kind: "error", status: 529, errorType: "overloaded_error" }
            : graderReply("satisfied", "Fine."),
        () => ({ kind: "text", text: "a poem" }),
      ),
    );
    const { events } = await settleOutcome("Anything.");
    expect(events.filter((e) => e.type === "span.outcome_evaluation_end").map((e) => e.result)).toEqual([
      "satisfied",
    ]);
  });
});
