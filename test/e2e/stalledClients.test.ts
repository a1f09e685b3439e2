/**
 * A client that opens a stream and then stops reading cannot make the server buffer without bound,
 * on any streaming edge. Each test opens the edge's stream over a raw loopback socket that reads
 * the headers and nothing more, while a turn streams ~8 MB of text in 64 KB deltas (far past what
 * the kernel's socket buffers absorb). Then: the response's own buffer never held more than about
 * one socket buffer and one frame, and the edge stopped pulling from the session tail (the producer
 * paused); the turn still committed; and hanging up returns the tail and frees the response.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import {
  type StalledClient,
  stalledRequest,
  watchNextResponse,
  watchNextTail,
} from "../support/stalledStream.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** Deltas the model streams, each one word of `WORD_BYTES`: about 8 MB, well past the kernel's buffers. */
const WORDS = 128;
const WORD_BYTES = 64 * 1024;
const TEXT = Array.from({ length: WORDS }, (_, i) => String(i % 10).repeat(WORD_BYTES)).join(" ");
/**
 * What the response may hold in its own buffer: the socket's high-water mark plus one frame (a 64 KB
 * delta, JSON-quoted), with room to spare. Without backpressure it holds megabytes.
 */
const BOUND = 512 * 1024;

let fake: FakeModelServer;
let t: TestServer;
let agentId: string;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
  });
  agentId = (await t.client.beta.agents.create({ name: "long talker", model: MODEL })).id;
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: TEXT });
});

const auth = { authorization: `Bearer ${TEST_API_KEY}` };
const json = { ...auth, "content-type": "application/json", accept: "text/event-stream" };

/**
 * Opens the stream with `open` (which also starts the turn), lets the turn commit while the client
 * reads nothing, then hangs up; asserts the three promises on the way.
 */
async function holdsStalledClient(path: string, open: () => Promise<StalledClient>): Promise<void> {
  const response = watchNextResponse(
    t.server.app.server,
    (request) => request.url?.startsWith(path) === true,
  );
  const tail = watchNextTail(t.server.services.tail);
  const client = await open();
  expect(client.status).toBe(200);
  const watched = await response;
  const producer = await tail;

  // The turn commits in full although nobody reads its stream.
  const events = await waitForHistory(t.client, producer.session.id, (e) => e.some(isEndTurnIdle), 60_000);
  const answer = events.filter((e) => e.type === "agent.message").at(-1);
  expect(textOf(answer)).toBe(TEXT);

  // The response buffered about a socket buffer and a frame; the edge stopped pulling the tail.
  expect(watched.maxBuffered).toBeLessThan(BOUND);
  expect(watched.written).toBeLessThan(TEXT.length);
  expect(producer.pulled).toBeLessThan(WORDS);

  // Hanging up ends the writer: the tail is returned, nothing waits on the socket.
  client.close();
  await watched.closed;
  await producer.stopped;
  expect(watched.response.listenerCount("drain")).toBe(0);
}

describe("a client that stops reading a stream", () => {
  it("Managed Agents: the session event stream holds one frame, the turn commits, hanging up returns the tail", async () => {
    const environment = await t.client.beta.environments.create({ name: "stalled" });
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environment.id });
    const path = `/v1/sessions/${session.id}/events/stream`;
    await holdsStalledClient(path, async () => {
      const client = await stalledRequest(t.server.url, {
        method: "GET",
        path: `${path}?event_deltas[]=agent.message`,
        headers: { ...auth, accept: "text/event-stream" },
      });
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("talk at length")] });
      return client;
    });
  });

  it("AI SDK: the chat stream holds one frame, the turn commits, hanging up returns the tail", async () => {
    const path = "/v1/ai-sdk/chat";
    await holdsStalledClient(path, () =>
      stalledRequest(t.server.url, {
        method: "POST",
        path,
        headers: json,
        body: JSON.stringify({
          id: `chat-${randomUUID()}`,
          trigger: "submit-message",
          agentId,
          messages: [{ id: randomUUID(), role: "user", parts: [{ type: "text", text: "talk at length" }] }],
        }),
      }),
    );
  });

  it("AG-UI: the run stream holds one frame, the turn commits, hanging up returns the tail", async () => {
    const path = `/v1/ag-ui/agents/${agentId}`;
    await holdsStalledClient(path, () =>
      stalledRequest(t.server.url, {
        method: "POST",
        path,
        headers: json,
        body: JSON.stringify({
          threadId: `thread-${randomUUID()}`,
          runId: `run-${randomUUID()}`,
          messages: [{ id: randomUUID(), role: "user", content: "talk at length" }],
          tools: [],
          context: [],
          state: {},
          forwardedProps: {},
        }),
      }),
    );
  });

  it("A2A: the message stream holds one frame, the turn commits, hanging up returns the tail", async () => {
    const path = `/v1/a2a/agents/${agentId}/rest/message:stream`;
    await holdsStalledClient(path, () =>
      stalledRequest(t.server.url, {
        method: "POST",
        path,
        headers: json,
        body: JSON.stringify({
          message: { role: "ROLE_USER", messageId: randomUUID(), parts: [{ text: "talk at length" }] },
        }),
      }),
    );
  });
});
