import Anthropic from "@anthropic-ai/sdk";
import { BetaHeartbeatPreconditionFailedError } from "@anthropic-ai/sdk/resources/beta/environments/work";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OffsetClock } from "../support/offsetClock.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  expectApiError,
  history,
  isActionIdle,
  isEndTurnIdle,
  RFC3339,
  rawRequest,
  StreamReader,
  sleep,
  stopReason,
  userMessage,
} from "../support/sdkHelpers.js";
import {
  clientAs,
  createEnvironmentKey,
  selfHostedEnvironment,
  sessionsToken,
} from "../support/selfHosted.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// The self-hosted work queue (wire §2.8, §4) through the official SDK over real HTTP, on the
// embedded SQLite server and on PostgreSQL (a fresh schema the server migrates itself).
const BACKENDS = ["SQLite", "PostgreSQL"] as const;

describe.each(BACKENDS)("self-hosted work queue on %s", (backend) => {
  let t: TestServer;
  /** The server's clock: a test moves it past a lease instead of sleeping it out. */
  const clock = new OffsetClock();
  let drop: (() => Promise<void>) | undefined;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    let databaseUrl: string | undefined;
    if (backend === "PostgreSQL") {
      const schema = await emptySchema();
      drop = schema.drop;
      databaseUrl = schema.url;
    }
    t = await startTestServer({ workers: 1, clock, ...(databaseUrl ? { databaseUrl } : {}) });
  });
  afterAll(async () => {
    await t?.close();
    await drop?.();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  /** A session in a fresh self_hosted environment, and its work item polled, acked and heartbeated. */
  async function activeItem(options: { ttlSeconds?: number } = {}) {
    const setup = await selfHostedEnvironment(t);
    const session = await t.client.beta.sessions.create({
      agent: setup.agent.id,
      environment_id: setup.environment.id,
    });
    const polled = await setup.worker.beta.environments.work.poll(setup.environment.id);
    if (!polled) throw new Error("expected the new session's work item");
    await setup.worker.beta.environments.work.ack(polled.id, { environment_id: setup.environment.id });
    const token = sessionsToken(polled.secret);
    const tokenClient = clientAs(t, token);
    const beat = await tokenClient.beta.environments.work.heartbeat(polled.id, {
      environment_id: setup.environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
      ...(options.ttlSeconds ? { desired_ttl_seconds: options.ttlSeconds } : {}),
    });
    return { ...setup, session, polled, token, tokenClient, beat };
  }

  it("environment keys: shown once, listed without the secret, revoked for good; cloud environments have none", async () => {
    const env = await t.client.beta.environments.create({ name: "keys", config: { type: "self_hosted" } });
    const created = await createEnvironmentKey(t.client, env.id, "rack 7");
    expect(created).toMatchObject({
      type: "environment_key",
      environment_id: env.id,
      name: "rack 7",
      revoked_at: null,
    });
    expect(created.id).toMatch(/^envkey_/);
    expect(created.key).toMatch(/^sk-awaken-env-/);
    expect(created.created_at).toMatch(RFC3339);
    const listed = await t.client.get<{ data: Array<Record<string, unknown>>; next_page: null }>(
      `/v1/awaken/environments/${env.id}/keys`,
    );
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).not.toHaveProperty("key");
    expect(listed.data[0]?.key_hint).toBe(`sk-awaken-env-…${created.key?.slice(-4)}`);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const worker = clientAs(t, created.key as string);
    expect(await worker.beta.environments.work.poll(env.id)).toBeNull();
    const revoked = await t.client.post<{ revoked_at: string | null }>(
      `/v1/awaken/environments/${env.id}/keys/${created.id}/revoke`,
    );
    expect(revoked.revoked_at).toMatch(RFC3339);
    await expectApiError(worker.beta.environments.work.poll(env.id), Anthropic.AuthenticationError, {
      status: 401,
      type: "authentication_error",
      message: ["revoked"],
    });

    const cloud = await t.client.beta.environments.create({ name: "cloud" });
    await expectApiError(createEnvironmentKey(t.client, cloud.id), Anthropic.BadRequestError, {
      status: 400,
      type: "invalid_request_error",
      message: ["only self_hosted environments have environment keys"],
    });
    // An environment key cannot mint keys (API key only).
    const live = clientAs(t, (await createEnvironmentKey(t.client, env.id)).key as string);
    await expectApiError(createEnvironmentKey(live, env.id), Anthropic.PermissionDeniedError, {
      status: 403,
      type: "permission_error",
    });
  });

  it("a new session queues one item; poll → ack → heartbeat → stats, list, retrieve, update → stop; stopping twice is a 409 not to retry", async () => {
    const setup = await selfHostedEnvironment(t);
    const env = setup.environment.id;
    const session = await t.client.beta.sessions.create({ agent: setup.agent.id, environment_id: env });
    expect(await t.client.beta.environments.work.stats(env)).toMatchObject({
      type: "work_queue_stats",
      depth: 1,
      pending: 0,
    });

    const polled = await setup.worker.beta.environments.work.poll(env, { "Anthropic-Worker-ID": "worker-a" });
    expect(polled).toMatchObject({
      type: "work",
      environment_id: env,
      data: { type: "session", id: session.id },
      state: "queued",
      metadata: {},
      acknowledged_at: null,
      started_at: null,
    });
    expect(polled?.id).toMatch(/^work_/);
    const token = sessionsToken(polled?.secret);
    const workId = polled!.id;
    expect(await setup.worker.beta.environments.work.poll(env)).toBeNull(); // delivered once
    const stats = await t.client.beta.environments.work.stats(env);
    expect(stats).toMatchObject({ depth: 0, pending: 1, workers_polling: 1 });
    expect(stats.oldest_queued_at).toMatch(RFC3339);

    const acked = await setup.worker.beta.environments.work.ack(workId, { environment_id: env });
    expect(acked).toMatchObject({ state: "starting", secret: null });
    expect(acked.acknowledged_at).toMatch(RFC3339);

    const tokenClient = clientAs(t, token);
    const first = await tokenClient.beta.environments.work.heartbeat(workId, {
      environment_id: env,
      expected_last_heartbeat: "NO_HEARTBEAT",
    });
    expect(first).toMatchObject({
      type: "work_heartbeat",
      lease_extended: true,
      state: "active",
      ttl_seconds: 90,
    });
    expect(first.last_heartbeat).toMatch(RFC3339);
    const second = await tokenClient.beta.environments.work.heartbeat(workId, {
      environment_id: env,
      expected_last_heartbeat: first.last_heartbeat,
      desired_ttl_seconds: 30,
    });
    expect(second).toMatchObject({ lease_extended: true, state: "active", ttl_seconds: 30 });
    expect(second.last_heartbeat > first.last_heartbeat).toBe(true);
    // The environment key may heartbeat too (the SDK falls back to it without a secret).
    const third = await setup.worker.beta.environments.work.heartbeat(workId, {
      environment_id: env,
      expected_last_heartbeat: second.last_heartbeat,
    });
    expect(third.lease_extended).toBe(true);

    const retrieved = await t.client.beta.environments.work.retrieve(workId, { environment_id: env });
    expect(retrieved).toMatchObject({
      id: workId,
      state: "active",
      secret: null,
      latest_heartbeat_at: third.last_heartbeat,
    });
    expect(retrieved.started_at).toMatch(RFC3339);
    const updated = await t.client.beta.environments.work.update(workId, {
      environment_id: env,
      metadata: { host: "rack-7", drop: "x" },
    });
    expect(updated.metadata).toEqual({ host: "rack-7", drop: "x" });
    const patched = await t.client.beta.environments.work.update(workId, {
      environment_id: env,
      metadata: { drop: null },
    });
    expect(patched.metadata).toEqual({ host: "rack-7" });
    const listed = [];
    for await (const item of setup.worker.beta.environments.work.list(env)) listed.push(item);
    expect(listed.map((w) => [w.id, w.state, w.secret])).toEqual([[workId, "active", null]]);

    // A graceful stop asks the worker to wind down; its next heartbeat says so.
    const stopping = await t.client.beta.environments.work.stop(workId, { environment_id: env });
    expect(stopping.state).toBe("stopping");
    expect(stopping.stop_requested_at).toMatch(RFC3339);
    const told = await tokenClient.beta.environments.work.heartbeat(workId, {
      environment_id: env,
      expected_last_heartbeat: "anything: not compared once stopping",
    });
    expect(told.state).toBe("stopping");
    const stopped = await tokenClient.beta.environments.work.stop(workId, {
      environment_id: env,
      force: true,
    });
    expect(stopped).toMatchObject({ state: "stopped" });
    expect(stopped.stopped_at).toMatch(RFC3339);

    const again = await expectApiError(
      tokenClient.beta.environments.work.stop(workId, { environment_id: env, force: true }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: ["already stopped"] },
    );
    expect(again.headers?.get("x-should-retry")).toBe("false");
    const after = await tokenClient.beta.environments.work.heartbeat(workId, {
      environment_id: env,
      expected_last_heartbeat: told.last_heartbeat,
    });
    expect(after).toMatchObject({ state: "stopped", lease_extended: false });
    expect(await t.client.beta.environments.work.stats(env)).toMatchObject({ depth: 0, pending: 0 });
  });

  it("an empty poll with block_ms waits, then answers 204 (the SDK's null)", async () => {
    const setup = await selfHostedEnvironment(t);
    const started = Date.now();
    expect(
      await setup.worker.beta.environments.work.poll(setup.environment.id, { block_ms: 300 }),
    ).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    const raw = await rawRequest(t, "GET", `/v1/environments/${setup.environment.id}/work/poll`, {
      headers: { authorization: `Bearer ${setup.key}` },
    });
    expect(raw.status).toBe(204);
    expect(raw.body).toBe("");
    // A session created while a poll is waiting is delivered to it at once.
    const waiting = setup.worker.beta.environments.work.poll(setup.environment.id, { block_ms: 999 });
    await sleep(50);
    const session = await t.client.beta.sessions.create({
      agent: setup.agent.id,
      environment_id: setup.environment.id,
    });
    expect((await waiting)?.data).toEqual({ type: "session", id: session.id });
    await expectApiError(
      setup.worker.beta.environments.work.poll(setup.environment.id, { block_ms: 1000 }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: ["block_ms"] },
    );
  });

  it("an item polled but never acknowledged returns to the queue after reclaim_older_than_ms, and the first token's lease is gone", async () => {
    const setup = await selfHostedEnvironment(t);
    const env = setup.environment.id;
    await t.client.beta.sessions.create({ agent: setup.agent.id, environment_id: env });
    const first = await setup.worker.beta.environments.work.poll(env);
    expect(await setup.worker.beta.environments.work.poll(env, { reclaim_older_than_ms: 60_000 })).toBeNull();
    await sleep(30);
    const again = await setup.worker.beta.environments.work.poll(env, { reclaim_older_than_ms: 20 });
    expect(again?.id).toBe(first?.id);
    expect(again?.secret).not.toBe(first?.secret);

    const stale = clientAs(t, sessionsToken(first?.secret));
    const refused = await expectApiError(
      stale.beta.environments.work.heartbeat(first!.id, {
        environment_id: env,
        expected_last_heartbeat: "NO_HEARTBEAT",
      }),
      BetaHeartbeatPreconditionFailedError,
      { status: 412, type: "invalid_request_error", message: ["delivered again"] },
    );
    expect(refused.errorCode).toBe("heartbeat_precondition_failed");
    const fresh = clientAs(t, sessionsToken(again?.secret));
    await setup.worker.beta.environments.work.ack(first!.id, { environment_id: env });
    expect(
      await fresh.beta.environments.work.heartbeat(first!.id, {
        environment_id: env,
        expected_last_heartbeat: "NO_HEARTBEAT",
      }),
    ).toMatchObject({ state: "active", lease_extended: true });
  });

  it("a heartbeat that does not echo the last one is a 412 carrying the lease as the server holds it", async () => {
    const { environment, polled, tokenClient, beat } = await activeItem();
    const error = await expectApiError(
      tokenClient.beta.environments.work.heartbeat(polled.id, {
        environment_id: environment.id,
        expected_last_heartbeat: "2020-01-01T00:00:00.000Z",
      }),
      BetaHeartbeatPreconditionFailedError,
      { status: 412, type: "invalid_request_error", message: ["does not match"] },
    );
    expect(error).toBeInstanceOf(Anthropic.PreconditionFailedError);
    expect(error.errorCode).toBe("heartbeat_precondition_failed");
    expect(error.details).toEqual({
      error_code: "heartbeat_precondition_failed",
      current_state: {
        state: "active",
        ttl_seconds: 90,
        last_heartbeat: beat.last_heartbeat,
        lease_extended: false,
      },
    });
    // Claiming an already claimed lease is refused the same way.
    await expectApiError(
      tokenClient.beta.environments.work.heartbeat(polled.id, {
        environment_id: environment.id,
        expected_last_heartbeat: "NO_HEARTBEAT",
      }),
      BetaHeartbeatPreconditionFailedError,
      { status: 412, type: "invalid_request_error" },
    );
  });

  it("a lapsed lease rejects a late tool result sent with the old token and changes nothing; a fresh delivery's token works", async () => {
    const { environment, session, worker, polled, token, tokenClient } = await activeItem({ ttlSeconds: 1 });
    const reader = await StreamReader.open(t.client, session.id);
    await t.client.beta.sessions.events.send(session.id, {
      events: [userMessage('call get_weather {"city":"Paris"}')],
    });
    const idle = await reader.until(isActionIdle);
    const toolUseId = stopReason(idle)?.event_ids?.[0] as string;
    // The session API answers the token while its lease is live.
    expect((await tokenClient.beta.sessions.retrieve(session.id)).id).toBe(session.id);

    clock.advance(1_200); // the 1 s lease lapses without a heartbeat
    const before = await history(t.client, session.id);
    const late = await expectApiError(
      tokenClient.beta.sessions.events.send(session.id, {
        events: [
          {
            type: "user.custom_tool_result",
            custom_tool_use_id: toolUseId,
            content: [{ type: "text", text: "Sunny (late)" }],
          },
        ],
      }),
      Anthropic.PreconditionFailedError,
      { status: 412, type: "invalid_request_error", message: ["no longer holds the lease", "expired"] },
    );
    expect(late.errorCode).toBe("work_lease_lost");
    await expectApiError(
      tokenClient.beta.sessions.events.send(session.id, { events: [userMessage("late message")] }),
      Anthropic.PreconditionFailedError,
      { status: 412, type: "invalid_request_error" },
    );
    expect(await history(t.client, session.id)).toEqual(before);
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
    // Its heartbeat learns the lease is gone (the SDK worker then leaves the item alone).
    await expectApiError(
      tokenClient.beta.environments.work.heartbeat(polled.id, {
        environment_id: environment.id,
        expected_last_heartbeat: "NO_HEARTBEAT",
      }),
      BetaHeartbeatPreconditionFailedError,
      { status: 412, type: "invalid_request_error", message: ["back in the queue"] },
    );

    // The lapsed item is delivered again, with a new token bound to the new delivery.
    const again = await worker.beta.environments.work.poll(environment.id);
    expect(again?.id).toBe(polled.id);
    const fresh = clientAs(t, sessionsToken(again?.secret));
    expect(sessionsToken(again?.secret)).not.toBe(token);
    await worker.beta.environments.work.ack(polled.id, { environment_id: environment.id });
    await fresh.beta.environments.work.heartbeat(polled.id, {
      environment_id: environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
    });
    // The old token is now refused outright, even for reads.
    await expectApiError(tokenClient.beta.sessions.retrieve(session.id), Anthropic.PreconditionFailedError, {
      status: 412,
      type: "invalid_request_error",
      message: ["delivered again"],
    });
    const sent = await fresh.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUseId,
          content: [{ type: "text", text: "Sunny" }],
        },
      ],
    });
    expect(sent.data?.[0]).toMatchObject({ type: "user.custom_tool_result", custom_tool_use_id: toolUseId });
    await reader.until(isEndTurnIdle, { from: reader.events.indexOf(idle) + 1 });
    await reader.close();
    const results = (await history(t.client, session.id)).filter((e) => e.type === "user.custom_tool_result");
    expect(results).toHaveLength(1);
  });

  it("credentials are scoped: environment, route family, session and work item", async () => {
    const a = await activeItem();
    const b = await selfHostedEnvironment(t);
    const otherSession = await t.client.beta.sessions.create({
      agent: a.agent.id,
      environment_id: a.environment.id,
    });
    const denied = { status: 403, type: "permission_error" } as const;
    // An environment key of another environment.
    await expectApiError(
      b.worker.beta.environments.work.poll(a.environment.id),
      Anthropic.PermissionDeniedError,
      {
        ...denied,
        message: [`belongs to environment ${b.environment.id}`],
      },
    );
    await expectApiError(
      b.worker.beta.environments.work.ack(a.polled.id, { environment_id: a.environment.id }),
      Anthropic.PermissionDeniedError,
      denied,
    );
    // An environment key never reaches the normal API.
    await expectApiError(a.worker.beta.agents.list(), Anthropic.PermissionDeniedError, {
      ...denied,
      message: ["not an environment key"],
    });
    await expectApiError(
      a.worker.beta.sessions.retrieve(a.session.id),
      Anthropic.PermissionDeniedError,
      denied,
    );
    await expectApiError(
      a.worker.beta.environments.work.retrieve(a.polled.id, { environment_id: a.environment.id }),
      Anthropic.PermissionDeniedError,
      { ...denied, message: ["accepts an API key"] },
    );
    // A sessions token reaches its own session only, and none of the rest of the API.
    await expectApiError(
      a.tokenClient.beta.sessions.retrieve(otherSession.id),
      Anthropic.PermissionDeniedError,
      {
        ...denied,
        message: [`scoped to session ${a.session.id}`],
      },
    );
    await expectApiError(
      a.tokenClient.beta.sessions.events.send(otherSession.id, { events: [userMessage("hi")] }),
      Anthropic.PermissionDeniedError,
      denied,
    );
    await expectApiError(a.tokenClient.beta.sessions.list(), Anthropic.PermissionDeniedError, denied);
    await expectApiError(a.tokenClient.beta.agents.list(), Anthropic.PermissionDeniedError, denied);
    await expectApiError(
      a.tokenClient.beta.sessions.update(a.session.id, { title: "x" }),
      Anthropic.PermissionDeniedError,
      denied,
    );
    await expectApiError(
      a.tokenClient.beta.environments.work.poll(a.environment.id),
      Anthropic.PermissionDeniedError,
      denied,
    );
    const otherItem = await a.worker.beta.environments.work.poll(a.environment.id);
    await expectApiError(
      a.tokenClient.beta.environments.work.heartbeat(otherItem!.id, { environment_id: a.environment.id }),
      Anthropic.PermissionDeniedError,
      { ...denied, message: [`scoped to work ${a.polled.id}`] },
    );
    // …while what the worker needs works.
    const events = [];
    for await (const e of a.tokenClient.beta.sessions.events.list(a.session.id)) events.push(e);
    expect(Array.isArray(events)).toBe(true);
    // An API key cannot act as the worker, and a work list takes the environment key only.
    await expectApiError(
      t.client.beta.environments.work.poll(a.environment.id),
      Anthropic.PermissionDeniedError,
      {
        ...denied,
        message: ["accepts an environment key, not an API key"],
      },
    );
    await expectApiError(
      t.client.beta.environments.work.list(a.environment.id),
      Anthropic.PermissionDeniedError,
      denied,
    );
    // Work queues exist only for self_hosted environments.
    const cloud = await t.client.beta.environments.create({ name: "cloud" });
    await expectApiError(t.client.beta.environments.work.stats(cloud.id), Anthropic.BadRequestError, {
      status: 400,
      type: "invalid_request_error",
      message: ["only for self_hosted environments"],
    });
    const unknown = await rawRequest(t, "GET", `/v1/environments/${a.environment.id}/work/poll`, {
      headers: { authorization: "Bearer sk-awaken-sess-not-a-token" },
    });
    expect(unknown.status).toBe(401);
    expect(TEST_API_KEY).not.toMatch(/^sk-awaken-(env|sess)-/);
  });

  it("input to a session whose item stopped queues a new item; while one is live, none", async () => {
    const { environment, session, worker, polled, tokenClient } = await activeItem();
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    expect(await worker.beta.environments.work.poll(environment.id)).toBeNull();
    await tokenClient.beta.environments.work.stop(polled.id, { environment_id: environment.id, force: true });
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage("again")] });
    const next = await worker.beta.environments.work.poll(environment.id);
    expect(next?.data).toEqual({ type: "session", id: session.id });
    expect(next?.id).not.toBe(polled.id);
    const all = [];
    for await (const item of worker.beta.environments.work.list(environment.id)) all.push(item.state);
    expect(all.sort()).toEqual(["queued", "stopped"]);
  });
});
