/**
 * Erasure against runs in flight, over real HTTP on SQLite and PostgreSQL, with a fake Anthropic
 * server as the model: while a run of the subject is executing (the model holds its request) the
 * erasure is refused with a 409 `data_subject_busy` and writes nothing; once the run is idle it
 * erases. A run parked for a client's answer does not block it, and the request it resumes with is
 * built from the tombstoned history.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema, testDatabaseUrl } from "../support/postgresFixtures.js";
import {
  history,
  isActionIdle,
  isEndTurnIdle,
  MODEL,
  stopReason,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

interface Backend {
  t: TestServer;
  close(): Promise<void>;
}

async function sqliteBackend(modelEnv: NodeJS.ProcessEnv): Promise<Backend> {
  const t = await startTestServer({ env: modelEnv, workerPollMs: 50 });
  return { t, close: () => t.close() };
}

async function postgresBackend(modelEnv: NodeJS.ProcessEnv): Promise<Backend> {
  testDatabaseUrl(); // never skipped: without the URL this fails with what to set
  const schema = await emptySchema();
  const t = await startTestServer({ databaseUrl: schema.url, env: modelEnv, workerPollMs: 50 });
  return {
    t,
    close: async () => {
      await t.close();
      await schema.drop();
    },
  };
}

async function call(t: TestServer, method: string, path: string) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_API_KEY}` },
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const erase = (t: TestServer, subject: string) =>
  call(t, "POST", `/v1/awaken/data_subjects/${encodeURIComponent(subject)}/erasure`);
const erasures = async (t: TestServer, subject: string) =>
  (await call(t, "GET", `/v1/awaken/data_subjects/${encodeURIComponent(subject)}/erasures`)).json
    .data as unknown[];
/** The admin audit's `erase` entries for the subject. */
async function erasedInAudit(t: TestServer, subject: string): Promise<unknown[]> {
  const { status, json } = await call(
    t,
    "GET",
    `/v1/awaken/audit?resource_type=data_subject&resource_id=${encodeURIComponent(subject)}`,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  return (json.data as Array<{ action: string }>).filter((e) => e.action === "erase");
}

const plant = (label: string) => `planted-${label}-${randomBytes(8).toString("hex")}`;
const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);
const messagesOf = (fake: FakeModelServer, index: number) =>
  JSON.stringify(fake.requests[index]?.body.messages);

describe.each([
  ["SQLite", sqliteBackend],
  ["PostgreSQL", postgresBackend],
])("erasure while a run of the subject is in flight (%s)", (_name, open) => {
  let fake: FakeModelServer;
  let b: Backend;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    b = await open({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.setFallback({ kind: "text", text: "done" });
  });

  async function sessionOf(subject: string, tools: Array<Record<string, unknown>> = []) {
    const { client } = b.t;
    const agent = await client.beta.agents.create({ name: "erasure", model: MODEL, tools: tools as never });
    const environment = await client.beta.environments.create({ name: "erasure" });
    return client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      metadata: { awaken_data_subject: subject },
    });
  }

  it("an executing run refuses the erasure with a 409 data_subject_busy that writes nothing; idle, it erases", async () => {
    const { t } = b;
    const subject = `busy-${randomBytes(4).toString("hex")}`;
    const secret = plant("busy");
    const session = await sessionOf(subject);
    fake.enqueue({ kind: "hang" });
    const asked = fake.requests.length + 1;
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage(`my secret is ${secret}`)] });
    // The run is executing: the model has its request, built from the history that holds the secret.
    await fake.waitForRequests(asked, 20_000);
    expect(messagesOf(fake, asked - 1)).toContain(secret);
    const before = await history(t.client, session.id);
    expect(JSON.stringify(before)).toContain(secret);

    const refused = await erase(t, subject);
    expect(refused.status, JSON.stringify(refused.json)).toBe(409);
    expect(refused.json).toMatchObject({
      type: "error",
      error: { type: "conflict_error", details: { error_code: "data_subject_busy" } },
    });
    // Nothing written: the same facts with the same content, no receipt, no audit entry.
    expect(await history(t.client, session.id)).toEqual(before);
    expect(await erasures(t, subject)).toEqual([]);
    expect(await erasedInAudit(t, subject)).toEqual([]);

    // Interrupted, the run settles and the session goes idle; the erasure then goes through.
    await t.client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
    await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
    const receipt = await erase(t, subject);
    expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
    expect(receipt.json).toMatchObject({ subject_id: subject, removed: true, counts: { sessions: 1 } });
    const after = await history(t.client, session.id);
    expect(JSON.stringify(after)).not.toContain(secret);
    expect(ofType(after, "user.message")[0]?.content).toEqual([{ type: "text", text: "[erased]" }]);
    expect(await erasures(t, subject)).toHaveLength(1);
    expect(await erasedInAudit(t, subject)).toHaveLength(1);
  }, 60_000);

  it("a run parked for a client's answer does not block the erasure and resumes from the tombstoned history", async () => {
    const { t } = b;
    const subject = `parked-${randomBytes(4).toString("hex")}`;
    const secret = plant("parked");
    const session = await sessionOf(subject, [
      { type: "custom", name: "lookup", description: "look up", input_schema: { type: "object" } },
    ]);
    fake.enqueue({ kind: "tool_use", name: "lookup", input: { q: secret }, text: `looking up ${secret}` });
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage(`my secret is ${secret}`)] });
    const parked = await waitForHistory(t.client, session.id, (h) => h.some(isActionIdle), 15_000);
    const use = ofType(parked, "agent.custom_tool_use")[0]!;
    expect(use.input).toEqual({ q: secret });
    expect(stopReason(parked.at(-1))?.event_ids).toEqual([use.id]);

    const receipt = await erase(t, subject);
    expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
    expect(receipt.json).toMatchObject({ removed: true });
    const erased = await history(t.client, session.id);
    expect(erased.map((e) => [e.id, e.type])).toEqual(parked.map((e) => [e.id, e.type]));
    expect(JSON.stringify(erased)).not.toContain(secret);
    expect(ofType(erased, "agent.custom_tool_use")[0]?.input).toEqual({ erased: true });

    // The answer resumes the parked run; its next model request carries tombstones, not the secret.
    const asked = fake.requests.length + 1;
    await t.client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: use.id,
          content: [{ type: "text", text: "42" }],
        },
      ],
    });
    const ended = await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
    expect(fake.requests).toHaveLength(asked);
    const resumed = messagesOf(fake, asked - 1);
    expect(resumed).not.toContain(secret);
    expect(resumed).toContain("[erased]");
    expect(resumed).toContain('"erased":true');
    expect(resumed).toContain("42");
    expect(ofType(ended, "agent.message").at(-1)?.content).toEqual([{ type: "text", text: "done" }]);
    expect(JSON.stringify(ended)).not.toContain(secret);
  }, 60_000);
});
