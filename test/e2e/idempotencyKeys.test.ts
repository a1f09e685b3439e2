import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  createSession,
  expectApiError,
  history,
  isEndTurnIdle,
  StreamReader,
  textOf,
  userMessage,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// An Idempotency-Key names one send. Repeating it with the same body returns the original echo;
// repeating it with another body is refused (422, which the SDK does not retry) and changes
// nothing: the new content is neither merged nor silently dropped behind the first echo.

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

for (const backend of BACKENDS) {
  describe.skipIf(backend.unavailable() !== null)(`Idempotency-Key on ${backend.name}`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({ databaseUrl: await backend.databaseUrl() });
    });
    afterAll(async () => {
      await t?.close();
      for (const drop of drops.splice(0)) await drop();
    });

    const keyed = (key: string) => ({ headers: { "Idempotency-Key": key } });

    it("the same key and body return the original echo; another body under that key is a 422", async () => {
      const { session } = await createSession(t.client);
      const reader = await StreamReader.open(t.client, session.id);
      const first = await t.client.beta.sessions.events.send(
        session.id,
        { events: [userMessage("first content")] },
        keyed("key-1"),
      );
      await reader.until(isEndTurnIdle);

      const repeat = await t.client.beta.sessions.events.send(
        session.id,
        { events: [userMessage("first content")] },
        keyed("key-1"),
      );
      expect(first.data).toHaveLength(1);
      expect(repeat.data?.map((e) => e.id)).toEqual(first.data?.map((e) => e.id));

      const reused = await expectApiError(
        t.client.beta.sessions.events.send(
          session.id,
          { events: [userMessage("different content")] },
          keyed("key-1"),
        ),
        Anthropic.UnprocessableEntityError,
        {
          status: 422,
          type: "invalid_request_error",
          message: [/Idempotency-Key was already used .* with a different body/, /use a new key/],
        },
      );
      expect(reused.headers?.get("x-should-retry")).toBe("false");

      const messages = (await history(t.client, session.id)).filter((e) => e.type === "user.message");
      expect(messages.map(textOf)).toEqual(["first content"]);

      // A new key is new input.
      const next = await t.client.beta.sessions.events.send(
        session.id,
        { events: [userMessage("different content")] },
        keyed("key-2"),
      );
      expect(next.data).toHaveLength(1);
      expect(next.data?.[0]?.id).not.toBe(first.data?.[0]?.id);
      await reader.until(isEndTurnIdle, { from: reader.events.length });
      await reader.close();
      const after = (await history(t.client, session.id)).filter((e) => e.type === "user.message");
      expect(after.map(textOf)).toEqual(["first content", "different content"]);
    });

    it("the body is compared as events, not bytes: the same events in another key order are a repeat", async () => {
      const { session } = await createSession(t.client);
      const reader = await StreamReader.open(t.client, session.id);
      const first = await t.client.beta.sessions.events.send(
        session.id,
        { events: [{ type: "user.message", content: [{ type: "text", text: "same" }] }] },
        keyed("key-order"),
      );
      await reader.until(isEndTurnIdle);
      await reader.close();
      const repeat = await t.client.beta.sessions.events.send(
        session.id,
        { events: [{ content: [{ text: "same", type: "text" }], type: "user.message" }] },
        keyed("key-order"),
      );
      expect(first.data).toHaveLength(1);
      expect(repeat.data?.map((e) => e.id)).toEqual(first.data?.map((e) => e.id));
    });
  });
}
