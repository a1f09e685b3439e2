/**
 * A2A push notifications judged by the official client (`@a2a-js/sdk` over JSON-RPC, and its v0.3
 * transport) against the real server over real HTTP, with a webhook receiver on the loopback (the
 * operator allows it with `--allow-push-host`): configs set, read, listed and deleted; a turn's
 * status changes POSTed ending with completed, each carrying the config's token; refused URLs are
 * invalid params and write nothing.
 */
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { JsonRpcRequestMalformedError, JsonRpcTaskNotFoundError } from "@a2a-js/sdk/errors";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aBase, a2aClient, authedFetch, stateName, userRequest } from "../support/a2aClient.js";
import { MODEL, WEATHER_TOOL } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";
import { type ReceivedPush, startWebhookReceiver } from "../support/webhookReceiver.js";

let t: TestServer;
let strict: TestServer;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  t = await startTestServer({
    workerPollMs: 50,
    allowPushHosts: LOOPBACK,
    push: { pollMs: 50, retryBaseMs: 50, retryMaxMs: 200 },
  });
  // No push allow-list: what a server answers by default.
  strict = await startTestServer({ workerPollMs: 50 });
});
afterAll(async () => {
  await t.close();
  await strict.close();
  await receiver.close();
});

async function agent(server: TestServer, tools: unknown[] = []) {
  const a = await server.client.beta.agents.create({
    name: "push agent",
    model: MODEL,
    tools: tools as never,
  });
  return a.id;
}

function pushConfig(taskId: string, url: string, token = ""): TaskPushNotificationConfig {
  return { tenant: "", id: "", taskId, url, token, authentication: undefined };
}

/** The states of the status updates (and the first task snapshot) a webhook got for a task, in order. */
function statesFor(pushes: ReceivedPush[], taskId: string): string[] {
  return pushes.flatMap((p) => {
    if (p.body?.statusUpdate?.taskId === taskId) return [p.body.statusUpdate.status.state as string];
    if (p.body?.task?.id === taskId) return [`task:${p.body.task.status.state}`];
    return [];
  });
}

describe("A2A push notifications", () => {
  it("the card advertises push notifications", async () => {
    const agentId = await agent(t);
    const response = await authedFetch(`${a2aBase(t, agentId)}.well-known/agent-card.json`);
    const card = (await response.json()) as { capabilities: unknown };
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
  });

  it("a config sent with the message: the webhook gets the task, working, the artifact and completed, with the token", async () => {
    const agentId = await agent(t);
    const client = await a2aClient(t, agentId);
    const token = `tok-${randomUUID()}`;
    const result = await client.sendMessage(
      userRequest(
        "hello push",
        {},
        {
          acceptedOutputModes: [],
          taskPushNotificationConfig: pushConfig("", receiver.url, token),
          returnImmediately: false,
        },
      ),
    );
    if (!("status" in result)) throw new Error("expected a task");
    expect(stateName(result.status?.state)).toBe("COMPLETED");
    const got = await receiver.waitFor((a) => statesFor(a, result.id).includes("TASK_STATE_COMPLETED"));
    const mine = got.filter(
      (p) => statesFor([p], result.id).length > 0 || p.body?.artifactUpdate?.taskId === result.id,
    );
    expect(statesFor(mine, result.id)).toEqual([
      "task:TASK_STATE_SUBMITTED",
      "TASK_STATE_WORKING",
      "TASK_STATE_COMPLETED",
    ]);
    const artifact = mine.find((p) => p.body?.artifactUpdate)?.body.artifactUpdate;
    expect(artifact.artifact.parts[0].text).toContain("hello push");
    for (const p of mine) {
      expect(p.headers["x-a2a-notification-token"]).toBe(token);
      expect(p.contentType).toBe("application/a2a+json");
      expect(p.headers["x-awaken-delivery-id"]).toMatch(new RegExp(`^${result.id.replace(".", "\\.")}/`));
      // Signed with standard webhooks under the key derived from the token (docs/webhooks.md): the
      // receiver that chose the token verifies the body it got, and the id is the delivery id.
      expect(p.headers["webhook-id"]).toBe(p.headers["x-awaken-delivery-id"]);
      const key = `whsec_${createHash("sha256").update("awaken a2a push signing key\u0000").update(token).digest("base64")}`;
      expect(() => new Webhook(key).verify(p.raw, p.headers as Record<string, string>)).not.toThrow();
      expect(() => new Webhook(key).verify(`${p.raw} `, p.headers as Record<string, string>)).toThrow();
    }
    expect(new Set(mine.map((p) => p.headers["x-awaken-delivery-id"])).size).toBe(mine.length);
    // The token is sealed at rest: not in the database files, whatever SQLite has flushed where.
    for (const name of readdirSync(t.dataDir).filter((n) => n.startsWith("awaken.db"))) {
      expect(readFileSync(join(t.dataDir, name)).includes(token), name).toBe(false);
    }

    // The config is durable, listed and read back without its token; deleting it removes it.
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: result.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs).toHaveLength(1);
    const stored = listed.configs[0]!;
    expect(stored).toMatchObject({ taskId: result.id, url: receiver.url, token: "" });
    expect(JSON.stringify(listed)).not.toContain(token);
    const read = await client.getTaskPushNotificationConfig({ tenant: "", taskId: result.id, id: stored.id });
    expect(read).toEqual(stored);
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: result.id, id: stored.id });
    await expect(
      client.getTaskPushNotificationConfig({ tenant: "", taskId: result.id, id: stored.id }),
    ).rejects.toBeInstanceOf(JsonRpcTaskNotFoundError);
  });

  it("a config set on a task later hears where it stands, then each change; the v0.3 names work too", async () => {
    const agentId = await agent(t);
    const client = await a2aClient(t, agentId);
    const first = await client.sendMessage(userRequest("first"));
    if (!("status" in first)) throw new Error("expected a task");
    const created = await client.createTaskPushNotificationConfig({
      ...pushConfig(first.id, receiver.url, "t1"),
      id: "mine",
    });
    expect(created).toMatchObject({ id: "mine", taskId: first.id, url: receiver.url, token: "" });
    const got = await receiver.waitFor((a) => statesFor(a, first.id).length > 0);
    expect(statesFor(got, first.id)).toEqual(["task:TASK_STATE_COMPLETED"]);

    const legacy = new LegacyJsonRpcTransport({
      endpoint: `${t.server.url}/v1/a2a/agents/${agentId}`,
      fetchImpl: authedFetch,
    });
    const viaLegacy = await legacy.createTaskPushNotificationConfig({
      ...pushConfig(first.id, `${receiver.url}?v=0.3`, "t2"),
      id: "legacy",
    });
    expect(viaLegacy).toMatchObject({ id: "legacy", taskId: first.id });
    const both = await legacy.listTaskPushNotificationConfig({
      tenant: "",
      taskId: first.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(both.configs.map((c) => c.id).sort()).toEqual(["legacy", "mine"]);
    // A v0.3 config hears v0.3 bodies: the task, `kind`-tagged.
    const v03 = await receiver.waitFor((a) =>
      a.some((p) => p.body?.kind === "task" && p.body.id === first.id),
    );
    expect(v03.find((p) => p.body?.kind === "task")?.headers["x-a2a-notification-token"]).toBe("t2");
    await legacy.deleteTaskPushNotificationConfig({ tenant: "", taskId: first.id, id: "legacy" });
  });

  it("a client tool: the webhook hears input-required, then working and completed once answered", async () => {
    const agentId = await agent(t, [WEATHER_TOOL]);
    const client = await a2aClient(t, agentId);
    const asked = await client.sendMessage(
      userRequest(
        'call get_weather {"city":"Oslo"}',
        {},
        {
          acceptedOutputModes: [],
          taskPushNotificationConfig: pushConfig("", receiver.url, "tool-token"),
          returnImmediately: false,
        },
      ),
    );
    if (!("status" in asked)) throw new Error("expected a task");
    expect(stateName(asked.status?.state)).toBe("INPUT_REQUIRED");
    await receiver.waitFor((a) => statesFor(a, asked.id).includes("TASK_STATE_INPUT_REQUIRED"));
    const answered = await client.sendMessage(
      userRequest("Sunny, 20C", { taskId: asked.id, contextId: asked.contextId }),
    );
    expect("status" in answered && stateName(answered.status?.state)).toBe("COMPLETED");
    const got = await receiver.waitFor((a) => statesFor(a, asked.id).includes("TASK_STATE_COMPLETED"));
    expect(statesFor(got, asked.id)).toEqual([
      "task:TASK_STATE_SUBMITTED",
      "TASK_STATE_WORKING",
      "TASK_STATE_INPUT_REQUIRED",
      "TASK_STATE_WORKING",
      "TASK_STATE_COMPLETED",
    ]);
  });

  it("the HTTP+JSON binding sets, reads, lists and deletes configs over the same store", async () => {
    const agentId = await agent(t);
    const rest = await a2aClient(t, agentId, "HTTP+JSON");
    const task = await rest.sendMessage(userRequest("over rest"));
    if (!("status" in task)) throw new Error("expected a task");
    const created = await rest.createTaskPushNotificationConfig({
      ...pushConfig(task.id, receiver.url, "rest-token"),
      id: "rest",
    });
    expect(created).toMatchObject({ id: "rest", taskId: task.id, token: "" });
    const got = await receiver.waitFor((a) => statesFor(a, task.id).length > 0);
    expect(got.find((p) => p.body?.task?.id === task.id)?.headers["x-a2a-notification-token"]).toBe(
      "rest-token",
    );
    const read = await rest.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "rest" });
    expect(read).toEqual(created);
    // What one binding stored, the other reads.
    const rpc = await a2aClient(t, agentId);
    const listed = await rpc.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs.map((c) => c.id)).toEqual(["rest"]);
    await expect(
      rest.createTaskPushNotificationConfig(pushConfig(task.id, "https://169.254.169.254/latest", "x")),
    ).rejects.toThrow(/loopback, link-local, private or reserved/);
    await rest.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "rest" });
    const after = await rpc.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(after.configs).toEqual([]);
  });

  it("refuses loopback, metadata, private, file: and ftp: URLs (and http) by default, writing nothing", async () => {
    const agentId = await agent(strict);
    const client = await a2aClient(strict, agentId);
    const task = await client.sendMessage(userRequest("a task"));
    if (!("status" in task)) throw new Error("expected a task");
    for (const url of [
      "https://127.0.0.1/hook",
      "https://localhost/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://10.0.0.7/hook",
      "https://[::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "http://example.com/hook",
      "file:///etc/passwd",
      "ftp://example.com/hook",
      "https://user:pw@example.com/hook",
      "not a url",
    ]) {
      const refused = client.createTaskPushNotificationConfig(pushConfig(task.id, url, "x"));
      await expect(refused, url).rejects.toBeInstanceOf(JsonRpcRequestMalformedError);
    }
    // Refused inside SendMessage too: no task is opened.
    await expect(
      client.sendMessage(
        userRequest(
          "never entered",
          { contextId: task.contextId },
          {
            acceptedOutputModes: [],
            taskPushNotificationConfig: pushConfig("", "https://127.0.0.1/hook"),
            returnImmediately: false,
          },
        ),
      ),
    ).rejects.toBeInstanceOf(JsonRpcRequestMalformedError);
    const tasks = await client.listTasks({
      tenant: "",
      contextId: task.contextId,
      status: 0,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(tasks.tasks).toHaveLength(1);
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs).toEqual([]);
    // An unknown task is task-not-found.
    await expect(
      client.createTaskPushNotificationConfig(pushConfig(`${task.contextId}.nope`, "https://example.com/h")),
    ).rejects.toBeInstanceOf(JsonRpcTaskNotFoundError);
  });
});
