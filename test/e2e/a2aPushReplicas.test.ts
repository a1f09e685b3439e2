/**
 * Push delivery with two replicas on one PostgreSQL database, both polling the outbox fast: every
 * notification of every task reaches the webhook exactly once (rows are leased to one replica at a
 * time and derived once per fact), in order, ending with completed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { a2aClient, userRequest } from "../support/a2aClient.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";
import { startWebhookReceiver } from "../support/webhookReceiver.js";

let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>> | undefined;
const servers: TestServer[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await receiver?.close();
  await schema?.drop();
  schema = undefined;
});

describe("A2A push with replicas on PostgreSQL", () => {
  it("delivers each notification once, whichever replica holds it", async () => {
    const common = {
      databaseUrl: schema!.url,
      workerPollMs: 50,
      allowPushHosts: LOOPBACK,
      push: { pollMs: 10, retryBaseMs: 50 },
    };
    const a = await startTestServer(common);
    servers.push(a);
    const b = await startTestServer({ ...common, workers: 0 });
    servers.push(b);
    const agent = await a.client.beta.agents.create({ name: "push replicas", model: MODEL });
    const peers = [await a2aClient(a, agent.id), await a2aClient(b, agent.id)];
    const tasks = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const result = await peers[i % 2]!.sendMessage(
          userRequest(
            `task ${i}`,
            {},
            {
              acceptedOutputModes: [],
              taskPushNotificationConfig: {
                tenant: "",
                id: "hook",
                taskId: "",
                url: receiver!.url,
                token: `token-${i}`,
                authentication: undefined,
              },
              returnImmediately: false,
            },
          ),
        );
        if (!("status" in result)) throw new Error("expected a task");
        return result.id;
      }),
    );
    const completed =
      (id: string) => (p: { body: { statusUpdate?: { taskId: string; status: { state: string } } } }) =>
        p.body?.statusUpdate?.taskId === id && p.body.statusUpdate.status.state === "TASK_STATE_COMPLETED";
    await receiver!.waitFor((got) => tasks.every((id) => got.some(completed(id))), 30_000);
    // Let any duplicate that was going to arrive arrive.
    await new Promise((r) => setTimeout(r, 300));
    const ids = receiver!.received.map((p) => p.headers["x-awaken-delivery-id"]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, id] of tasks.entries()) {
      const mine = receiver!.received.filter((p) =>
        String(p.headers["x-awaken-delivery-id"]).startsWith(`${id}/`),
      );
      expect(mine.map((p) => Object.keys(p.body)[0])).toEqual([
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
      ]);
      for (const p of mine) expect(p.headers["x-a2a-notification-token"]).toBe(`token-${i}`);
    }
  });
});
