/**
 * A user profile's delete while a run of one of its sessions is in flight, over the SDK on SQLite
 * and PostgreSQL, with a fake Anthropic server holding the model request: the delete is refused
 * with a 409 `data_subject_busy` and deletes nothing (the profile, its content and its id all
 * stay); once the run is idle, the delete erases the content and the profile.
 */
import { randomBytes } from "node:crypto";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema, testDatabaseUrl } from "../support/postgresFixtures.js";
import {
  expectApiError,
  history,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

describe.each(["SQLite", "PostgreSQL"] as const)(
  "deleting a user profile with a run in flight (%s)",
  (backend) => {
    let fake: FakeModelServer;
    let t: TestServer;
    let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
    beforeAll(async () => {
      fake = await startFakeAnthropic();
      fake.setFallback({ kind: "text", text: "done" });
      if (backend === "PostgreSQL") {
        testDatabaseUrl(); // never skipped: without the URL this fails with what to set
        schema = await emptySchema();
      }
      t = await startTestServer({
        env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
        workerPollMs: 50,
        ...(schema ? { databaseUrl: schema.url } : {}),
      });
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await schema?.drop();
      await fake?.close();
    });

    it("refuses with a 409 data_subject_busy that deletes nothing; idle, it deletes and erases", async () => {
      const { client } = t;
      const secret = `planted-${randomBytes(8).toString("hex")}`;
      const profile = await client.userProfiles.create({ name: "Busy" });
      const agent = await client.beta.agents.create({ name: "busy", model: MODEL });
      const environment = await client.beta.environments.create({ name: "busy" });
      const session = await client.beta.sessions.create(
        { agent: agent.id, environment_id: environment.id },
        { headers: { "anthropic-user-profile-id": profile.id } },
      );
      fake.enqueue({ kind: "hang" });
      const asked = fake.requests.length + 1;
      await client.beta.sessions.events.send(session.id, { events: [userMessage(`my secret is ${secret}`)] });
      await fake.waitForRequests(asked, 20_000);
      const before = await history(client, session.id);

      const refused = await expectApiError(client.userProfiles.delete(profile.id), Anthropic.ConflictError, {
        status: 409,
        type: "conflict_error",
      });
      expect(refused.errorCode).toBe("data_subject_busy");
      expect(await client.userProfiles.retrieve(profile.id)).toEqual(profile);
      expect(await history(client, session.id)).toEqual(before);

      await client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
      await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
      await client.userProfiles.delete(profile.id);
      expect(JSON.stringify(await history(client, session.id))).not.toContain(secret);
      await expectApiError(client.userProfiles.retrieve(profile.id), Anthropic.NotFoundError, NOT_FOUND);
    }, 60_000);
  },
);
