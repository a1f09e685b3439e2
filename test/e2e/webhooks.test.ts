/**
 * Webhook endpoints over the official SDK (`beta.organization.webhooks`) on SQLite and PostgreSQL,
 * and their deliveries: every one verified by the SDK's `webhooks.unwrap()` with the endpoint's
 * signing secret; events from committed session facts and from resources' changes; at least once
 * through a receiver outage with a stable `webhook-id`; a dead-lettered delivery redelivered on
 * request; a URL the address policy refuses; the secret never stored or answered in plaintext.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  BAD_REQUEST,
  expectApiError,
  MODEL,
  NOT_FOUND,
  RFC3339,
  userMessage,
  WEATHER_TOOL,
} from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";
import { type ReceivedPush, startWebhookReceiver } from "../support/webhookReceiver.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
/** The SDK types `enabled_events` with the organization-level types only; the server takes the whole union. */
const events = (...types: string[]) => types as never;
const unwrapper = new Anthropic({ apiKey: "unused" });

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

/** A receiver that accepts only deliveries `unwrap()` verifies with one of `keys`. */
async function verifyingReceiver(keys: string[]): Promise<Receiver> {
  return startWebhookReceiver({
    verify: (raw, headers) => {
      const failures: unknown[] = [];
      for (const key of keys) {
        try {
          unwrapper.beta.webhooks.unwrap(raw, { headers, key });
          return;
        } catch (error) {
          failures.push(error);
        }
      }
      throw failures[0] ?? new Error("no key");
    },
  });
}

const typeOf = (p: ReceivedPush): string => p.body?.data?.type;
const idOf = (p: ReceivedPush): string => String(p.headers["webhook-id"]);

describe.each(BACKENDS)("webhook endpoints over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const keys: string[] = [];
  let receiver: Receiver;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    receiver = await verifyingReceiver(keys);
    t = await startTestServer({
      allowPushHosts: LOOPBACK,
      push: { pollMs: 20, idlePollMs: 200, retryBaseMs: 50, retryMaxMs: 200, maxAttempts: 3 },
      ...(schema ? { databaseUrl: schema.url } : {}),
    });
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });
  afterEach(async () => {
    // Each test starts with no endpoint and an answering receiver.
    if (unavailable) return;
    for (const e of await all(client.beta.organization.webhooks.list())) {
      await client.beta.organization.webhooks.delete(e.id);
    }
    receiver.status = 200;
  });

  it("create, retrieve, update, list, regenerate and delete: the secret only on create and regenerate", async () => {
    const created = await client.beta.organization.webhooks.create({
      url: "https://hooks.example.com/awaken",
      enabled_events: events("session.created", "agent.created"),
      name: "ops",
    });
    expect(created).toMatchObject({
      url: "https://hooks.example.com/awaken",
      enabled_events: ["session.created", "agent.created"],
      name: "ops",
      description: "",
      state: "enabled",
      disabled_reason: "",
    });
    expect(created.id).toMatch(/^whep_/);
    expect(created.created_at).toMatch(RFC3339);
    expect(created.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await client.beta.organization.webhooks.retrieve(created.id);
    const { signing_secret: _secret, ...withoutSecret } = created;
    expect(read).toEqual(withoutSecret);
    expect(JSON.stringify(read)).not.toContain(created.signing_secret);

    const updated = await client.beta.organization.webhooks.update(created.id, {
      description: "on call",
      state: "disabled",
      enabled_events: events(),
    });
    expect(updated).toMatchObject({
      description: "on call",
      state: "disabled",
      enabled_events: ["session.created", "agent.created"],
    });
    const second = await client.beta.organization.webhooks.create({
      url: "https://hooks.example.com/two",
      enabled_events: events("vault.created"),
    });
    expect((await all(client.beta.organization.webhooks.list())).map((e) => e.id)).toEqual([
      second.id,
      created.id,
    ]);
    expect(
      (await all(client.beta.organization.webhooks.list({ order: "asc", limit: 1 }))).map((e) => e.id),
    ).toEqual([created.id, second.id]);

    const { signing_secret } = await client.beta.organization.webhooks.regenerateSigningSecret(created.id);
    expect(signing_secret).toMatch(/^whsec_/);
    expect(signing_secret).not.toBe(created.signing_secret);

    // The admin audit records each change, never the secret.
    const audit = await t?.client.get<{ data: Array<Record<string, unknown>> }>("/v1/awaken/audit", {
      query: { resource_id: created.id },
    });
    expect(audit?.data.map((e) => e.action).sort()).toEqual(["create", "rotate", "update"]);
    expect(JSON.stringify(audit)).not.toContain(signing_secret);

    expect(await client.beta.organization.webhooks.delete(created.id)).toEqual({
      id: created.id,
      type: "webhook_endpoint_deleted",
    });
    await expectApiError(
      client.beta.organization.webhooks.retrieve(created.id),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
  });

  it("refuses an unknown event type and a URL the outbound address policy refuses", async () => {
    await expectApiError(
      client.beta.organization.webhooks.create({
        url: "https://hooks.example.com/x",
        enabled_events: events("nope"),
      }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.organization.webhooks.create({
        url: "https://hooks.example.com/x",
        enabled_events: events(),
      }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    for (const url of [
      "http://hooks.example.com/x",
      "https://10.1.2.3/x",
      "https://169.254.169.254/latest",
    ]) {
      const error = await expectApiError(
        client.beta.organization.webhooks.create({ url, enabled_events: events("agent.created") }),
        Anthropic.BadRequestError,
        BAD_REQUEST,
      );
      expect(JSON.stringify(error.error)).toMatch(/webhook url|address/);
    }
    expect(await all(client.beta.organization.webhooks.list())).toEqual([]);
  });

  it("delivers session and resource events from committed facts, each verified by unwrap(), through an outage", async () => {
    const endpoint = await client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: events(
        "agent.created",
        "environment.created",
        "session.created",
        "session.running",
        "session.status_run_started",
        "session.idled",
        "session.status_idled",
      ),
    });
    keys.splice(0, keys.length, endpoint.signing_secret);
    // The receiver is down while the events happen: each is retried until it is back.
    receiver.status = 503;
    const agent = await client.beta.agents.create({ name: "hooked", model: MODEL });
    const environment = await client.beta.environments.create({ name: "hooked" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    const deadline = Date.now() + 15_000;
    while (!receiver.received.some((p) => p.answered === 503 && typeOf(p) === "agent.created")) {
      if (Date.now() > deadline) throw new Error("nothing was tried during the outage");
      await new Promise((r) => setTimeout(r, 50));
    }
    receiver.status = 200;
    const got = await receiver.waitFor((a) => a.some((p) => typeOf(p) === "session.idled"));
    expect(receiver.received.every((p) => p.verified)).toBe(true);
    const types = got.map(typeOf);
    for (const type of [
      "agent.created",
      "environment.created",
      "session.created",
      "session.status_run_started",
      "session.running",
      "session.status_idled",
      "session.idled",
    ]) {
      expect(types, type).toContain(type);
    }
    const sessionEvent = got.find((p) => typeOf(p) === "session.created");
    expect(sessionEvent?.body).toMatchObject({
      type: "event",
      data: {
        id: session.id,
        type: "session.created",
        workspace_id: expect.any(String),
        organization_id: expect.any(String),
      },
    });
    expect(got.find((p) => typeOf(p) === "agent.created")?.body.data.id).toBe(agent.id);
    // At least once with a stable id: every retry of a delivery carried the id it was accepted with,
    // and no delivery was accepted twice.
    const accepted = got.map(idOf);
    expect(new Set(accepted).size).toBe(accepted.length);
    for (const tried of receiver.received.filter((p) => p.answered === 503)) {
      expect(accepted).toContain(idOf(tried));
    }
    // Session events of one session arrive in fact order.
    const sessionTypes = types.filter((t) => t.startsWith("session."));
    expect(sessionTypes.indexOf("session.created")).toBeLessThan(sessionTypes.indexOf("session.running"));
    expect(sessionTypes.indexOf("session.running")).toBeLessThan(sessionTypes.indexOf("session.idled"));

    // After a regeneration, deliveries are signed with the new secret only.
    const { signing_secret } = await client.beta.organization.webhooks.regenerateSigningSecret(endpoint.id);
    keys.splice(0, keys.length, signing_secret);
    const later = await client.beta.agents.create({ name: "after rotation", model: MODEL });
    await receiver.waitFor((a) => a.some((p) => p.body?.data?.id === later.id));
    expect(() =>
      unwrapper.beta.webhooks.unwrap(
        receiver.accepted().find((p) => p.body?.data?.id === later.id)?.raw ?? "",
        {
          headers: receiver.accepted().find((p) => p.body?.data?.id === later.id)?.headers as Record<
            string,
            string
          >,
          key: endpoint.signing_secret,
        },
      ),
    ).toThrow();
  });

  it("a session waiting on a client's tool is session.requires_action; updates and archiving follow; a disabled endpoint hears nothing", async () => {
    const endpoint = await client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: events(
        "session.requires_action",
        "session.updated",
        "session.archived",
        "agent.created",
      ),
    });
    keys.splice(0, keys.length, endpoint.signing_secret);
    const agent = await client.beta.agents.create({ name: "tools", model: MODEL, tools: [WEATHER_TOOL] });
    const environment = await client.beta.environments.create({ name: "tools" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call get_weather {"city":"Oslo"}')],
    });
    const mine = (a: ReceivedPush[]) => a.filter((p) => p.body?.data?.id === session.id).map(typeOf);
    await receiver.waitFor((a) => mine(a).includes("session.requires_action"));
    await client.beta.sessions.update(session.id, { title: "weather" });
    await client.beta.sessions.archive(session.id);
    const got = await receiver.waitFor(
      (a) => mine(a).includes("session.archived") && mine(a).includes("session.updated"),
    );
    expect(mine(got).filter((t) => t === "session.requires_action")).toHaveLength(1);
    expect(receiver.received.every((p) => p.verified)).toBe(true);

    await client.beta.organization.webhooks.update(endpoint.id, { state: "disabled" });
    const quiet = await client.beta.agents.create({ name: "unheard", model: MODEL });
    const { data } = await client.get<{ data: Array<{ event_type: string }> }>(
      `/v1/awaken/webhooks/${endpoint.id}/deliveries`,
    );
    // Only the first agent's creation (while it was enabled) was queued.
    expect(data.filter((d) => d.event_type === "agent.created")).toHaveLength(1);
    expect(receiver.received.some((p) => p.body?.data?.id === quiet.id)).toBe(false);
  });

  it("a deployment's changes and its runs are deployment.* and deployment_run.* events", async () => {
    const endpoint = await client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: events(
        "deployment.created",
        "deployment.paused",
        "deployment.archived",
        "deployment_run.succeeded",
        "deployment_run.failed",
      ),
    });
    keys.splice(0, keys.length, endpoint.signing_secret);
    const agent = await client.beta.agents.create({ name: "scheduled", model: MODEL });
    const environment = await client.beta.environments.create({ name: "scheduled" });
    const deployment = await client.beta.deployments.create({
      name: "nightly",
      agent: agent.id,
      environment_id: environment.id,
      initial_events: [userMessage("report")],
    });
    const run = await client.beta.deployments.run(deployment.id);
    await client.beta.deployments.pause(deployment.id);
    await client.beta.agents.archive(agent.id);
    const failed = await client.beta.deployments.run(deployment.id);
    expect(failed.error).not.toBeNull();
    await client.beta.deployments.archive(deployment.id);
    const about = (a: ReceivedPush[], id: string) => a.filter((p) => p.body?.data?.id === id).map(typeOf);
    const got = await receiver.waitFor(
      (a) =>
        about(a, deployment.id).includes("deployment.archived") &&
        about(a, run.id).length > 0 &&
        about(a, failed.id).length > 0,
    );
    expect(about(got, deployment.id)).toEqual([
      "deployment.created",
      "deployment.paused",
      "deployment.archived",
    ]);
    expect(about(got, run.id)).toEqual(["deployment_run.succeeded"]);
    expect(about(got, failed.id)).toEqual(["deployment_run.failed"]);
    expect(receiver.received.every((p) => p.verified)).toBe(true);
  });

  it("a subagent's thread is session.thread_created then session.thread_idled, naming the thread", async () => {
    const endpoint = await client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: events("session.thread_created", "session.thread_idled"),
    });
    keys.splice(0, keys.length, endpoint.signing_secret);
    const researcher = await client.beta.agents.create({ name: "researcher", model: MODEL });
    const lead = await client.beta.agents.create({
      name: "lead",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "enabled", predefined_agents: [researcher.id] },
      },
    });
    const environment = await client.beta.environments.create({
      name: "subagents",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call spawn_agent {"agent_name":"researcher","message":"find A"}')],
    });
    const mine = (a: ReceivedPush[]) => a.filter((p) => p.body?.data?.id === session.id);
    const got = mine(
      await receiver.waitFor((a) => mine(a).some((p) => typeOf(p) === "session.thread_idled")),
    );
    expect(got.map(typeOf)).toEqual(["session.thread_created", "session.thread_idled"]);
    const threadId = got[0]?.body.data.session_thread_id;
    expect(threadId).toMatch(/^sthr_/);
    expect(got[1]?.body.data.session_thread_id).toBe(threadId);
    expect(got.every((p) => p.verified)).toBe(true);
  });

  it("an outcome's ended evaluation is session.outcome_evaluation_ended", async () => {
    const endpoint = await client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: events("session.outcome_evaluation_ended", "session.idled"),
    });
    keys.splice(0, keys.length, endpoint.signing_secret);
    const agent = await client.beta.agents.create({ name: "graded", model: MODEL });
    const environment = await client.beta.environments.create({ name: "graded" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.define_outcome",
          description: "Say something.",
          rubric: { type: "text", content: "offline-verdict: unreadable" },
        },
      ],
    });
    const mine = (a: ReceivedPush[]) => a.filter((p) => p.body?.data?.id === session.id).map(typeOf);
    const got = mine(await receiver.waitFor((a) => mine(a).includes("session.idled"), 20_000));
    expect(got).toEqual(["session.outcome_evaluation_ended", "session.idled"]);
  });

  it("a delivery that exhausts its attempts is dead-lettered, listed, and redelivered on request with its webhook-id", async () => {
    const endpoint = await client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: events("vault.created"),
    });
    keys.splice(0, keys.length, endpoint.signing_secret);
    receiver.status = 500;
    const vault = await client.beta.vaults.create({ display_name: "dead letter" });
    type Delivery = {
      id: string;
      state: string;
      attempts: number;
      event_type: string;
      last_error: string | null;
    };
    const deliveries = async (query: Record<string, string> = {}) =>
      (
        await client.get<{ data: Delivery[] }>(`/v1/awaken/webhooks/${endpoint.id}/deliveries`, {
          query,
        })
      ).data;
    const deadline = Date.now() + 15_000;
    let dead: Delivery | undefined;
    while (!dead) {
      if (Date.now() > deadline) throw new Error(`not dead-lettered: ${JSON.stringify(await deliveries())}`);
      dead = (await deliveries({ state: "abandoned" }))[0];
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(dead).toMatchObject({ event_type: "vault.created", attempts: 3, last_error: "HTTP 500" });
    const tried = receiver.received.filter((p) => p.body?.data?.id === vault.id);
    expect(tried.map(idOf)).toEqual([dead.id, dead.id, dead.id]);

    receiver.status = 200;
    const redelivered = await client.post<Delivery>(
      `/v1/awaken/webhooks/${endpoint.id}/deliveries/${dead.id}/redeliver`,
    );
    expect(redelivered).toMatchObject({ id: dead.id, state: "pending", attempts: 0 });
    const got = (await receiver.waitFor((a) => a.some((p) => p.body?.data?.id === vault.id))).filter(
      (p) => p.body?.data?.id === vault.id,
    );
    expect(got.map(idOf)).toEqual([dead.id]);
    expect(got[0]?.verified).toBe(true);
    await expectApiError(
      client.post(`/v1/awaken/webhooks/${endpoint.id}/deliveries/msg_unknown/redeliver`),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );

    // Nothing in the data directory holds the secret in plaintext (it is sealed at rest).
    if (backend === "SQLite" && t) {
      for (const name of readdirSync(t.dataDir)) {
        if (name.startsWith("awaken.sqlite")) {
          expect(readFileSync(join(t.dataDir, name)).includes(endpoint.signing_secret), name).toBe(false);
        }
      }
    }
  });
});
