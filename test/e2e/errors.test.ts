import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BAD_REQUEST,
  createSession,
  expectApiError,
  expectRawError,
  history,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  rawRequest,
  runTurn,
  StreamReader,
  userMessage,
  WEATHER_TOOL,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** The agents list plus one session's history and row: what a rejected request must leave alone. */
async function snapshot(sessionId: string) {
  const agents = [];
  for await (const agent of t.client.beta.agents.list({ include_archived: true, limit: 100 }))
    agents.push(agent);
  const environments = [];
  for await (const env of t.client.beta.environments.list({ include_archived: true, limit: 100 }))
    environments.push(env);
  const { stats: _stats, ...session } = await t.client.beta.sessions.retrieve(sessionId);
  return { agents, environments, session, events: await history(t.client, sessionId) };
}

describe("request validation answers with the error envelope and commits nothing", () => {
  let sessionId: string;
  let agentId: string;
  let environmentId: string;
  beforeAll(async () => {
    const { agent, environment, session } = await createSession(t.client);
    sessionId = session.id;
    agentId = agent.id;
    environmentId = environment.id;
    const reader = await StreamReader.open(t.client, session.id);
    await runTurn(t.client, reader, session.id, "some history first");
    await reader.close();
  });

  it("a malformed JSON body is a 400 saying the body is not valid JSON", async () => {
    const before = await snapshot(sessionId);
    for (const path of ["/v1/agents", `/v1/sessions/${sessionId}/events`]) {
      const response = await rawRequest(t, "POST", path, { body: '{"name": "x", ' });
      expect(expectRawError(response, 400, "invalid_request_error")).toMatch(/not valid JSON/);
    }
    expect(await snapshot(sessionId)).toEqual(before);
  });

  it("wrong types, missing required fields and unknown fields name the field and what is expected", async () => {
    const before = await snapshot(sessionId);
    const cases: Array<[() => Promise<unknown>, Array<string | RegExp>]> = [
      [
        () => t.client.beta.agents.create({ name: 42 as unknown as string, model: MODEL }),
        ["name", /string/],
      ],
      [
        () => t.client.beta.agents.create({ model: MODEL } as unknown as { name: string; model: string }),
        ["name", /required/],
      ],
      [
        () => t.client.beta.agents.create({ name: "x" } as unknown as { name: string; model: string }),
        ["model"],
      ],
      [
        () =>
          t.client.beta.agents.create({ name: "x", model: MODEL, colour: "red" } as unknown as {
            name: string;
            model: string;
          }),
        ["colour", /unknown field/],
      ],
      [() => t.client.beta.environments.create({} as unknown as { name: string }), ["name", /required/]],
      [
        () =>
          t.client.beta.sessions.create({ agent: agentId } as unknown as {
            agent: string;
            environment_id: string;
          }),
        ["environment_id", /required/],
      ],
      [
        () =>
          t.client.beta.sessions.events.send(sessionId, {
            events: [{ type: "user.message", content: "plain string" as unknown as [] }],
          }),
        ["events[0].content", /array of content blocks/],
      ],
      [() => t.client.beta.sessions.events.send(sessionId, { events: [] }), ["events", /at least one/]],
      [() => t.client.beta.sessions.events.list(sessionId, { limit: 0 }), ["limit", /integer/]],
      [
        () => t.client.beta.sessions.list({ statuses: ["sleeping" as "idle"] }),
        ["statuses", /unknown status "sleeping"/],
      ],
    ];
    for (const [call, message] of cases) {
      await expectApiError(call(), Anthropic.BadRequestError, { ...BAD_REQUEST, message });
    }
    expect(await snapshot(sessionId)).toEqual(before);
  });

  it("unknown agent, environment and session ids are 404s naming the id", async () => {
    const before = await snapshot(sessionId);
    await expectApiError(t.client.beta.agents.retrieve("agent_missing"), Anthropic.NotFoundError, {
      ...NOT_FOUND,
      message: ["agent_missing"],
    });
    await expectApiError(
      t.client.beta.agents.update("agent_missing", { name: "x" }),
      Anthropic.NotFoundError,
      { ...NOT_FOUND, message: ["agent_missing"] },
    );
    const envError = await expectApiError(
      t.client.beta.environments.retrieve("env_missing"),
      Anthropic.Beta.BetaEnvironmentNotFoundError,
      { ...NOT_FOUND, message: ["env_missing"] },
    );
    expect(envError.errorCode).toBe("environment_not_found");
    await expectApiError(t.client.beta.sessions.retrieve("sesn_missing"), Anthropic.NotFoundError, {
      ...NOT_FOUND,
      message: ["sesn_missing"],
    });
    await expectApiError(
      t.client.beta.sessions.events.send("sesn_missing", { events: [userMessage("hi")] }),
      Anthropic.NotFoundError,
      { ...NOT_FOUND, message: ["sesn_missing"] },
    );
    await expectApiError(
      t.client.beta.sessions.create({ agent: "agent_missing", environment_id: environmentId }),
      Anthropic.NotFoundError,
      { ...NOT_FOUND, message: ["agent_missing"] },
    );
    await expectApiError(
      t.client.beta.sessions.create({ agent: agentId, environment_id: "env_missing" }),
      Anthropic.NotFoundError,
      { ...NOT_FOUND, message: ["env_missing"] },
    );
    await expectApiError(
      t.client.beta.sessions.create({
        agent: { type: "agent", id: agentId, version: 9 },
        environment_id: environmentId,
      }),
      Anthropic.NotFoundError,
      { ...NOT_FOUND, message: [agentId, /version 9/] },
    );
    expect(await snapshot(sessionId)).toEqual(before);
  });

  it("over-long names and metadata over its limits are rejected as invalid_metadata / invalid_request", async () => {
    const before = await snapshot(sessionId);
    await expectApiError(
      t.client.beta.agents.create({ name: "n".repeat(257), model: MODEL }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: ["name", /256/, /got 257/],
      },
    );
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    const cases: Array<[Record<string, string>, RegExp[]]> = [
      [seventeen, [/16 keys/, /got 17/]],
      [{ ["k".repeat(65)]: "v" }, [/1-64 characters/, /got 65/]],
      [{ key: "v".repeat(513) }, [/512 characters/, /got 513/]],
    ];
    for (const [metadata, message] of cases) {
      for (const call of [
        () => t.client.beta.agents.create({ name: "meta", model: MODEL, metadata }),
        () => t.client.beta.agents.update(agentId, { metadata }),
        () => t.client.beta.environments.create({ name: "meta", metadata }),
        () => t.client.beta.sessions.update(sessionId, { metadata }),
      ]) {
        const error = await expectApiError(call(), Anthropic.Beta.BetaInvalidMetadataError, {
          ...BAD_REQUEST,
          message: ["metadata", ...message],
        });
        expect(error.errorCode).toBe("invalid_metadata");
      }
    }
    await expectApiError(
      t.client.beta.environments.create({ name: "e".repeat(257) }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: ["name", /got 257/],
      },
    );
    await expectApiError(
      t.client.beta.sessions.update(sessionId, { title: "t".repeat(513) }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: ["title", /512/],
      },
    );
    expect(await snapshot(sessionId)).toEqual(before);
  });

  it("a metadata patch whose result would exceed 16 keys is rejected on every resource", async () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, "v"]));
    const agent = await t.client.beta.agents.create({ name: "full", model: MODEL, metadata: sixteen });
    const env = await t.client.beta.environments.create({ name: "full", metadata: sixteen });
    const { session } = await createSession(t.client);
    await t.client.beta.sessions.update(session.id, { metadata: sixteen });
    const before = await snapshot(session.id);
    for (const call of [
      () => t.client.beta.agents.update(agent.id, { metadata: { one_more: "v" } }),
      () => t.client.beta.environments.update(env.id, { metadata: { one_more: "v" } }),
      () => t.client.beta.sessions.update(session.id, { metadata: { one_more: "v" } }),
    ]) {
      const error = await expectApiError(call(), Anthropic.Beta.BetaInvalidMetadataError, {
        ...BAD_REQUEST,
        message: ["metadata", /16/, /17/],
      });
      expect(error.errorCode).toBe("invalid_metadata");
    }
    expect(await snapshot(session.id)).toEqual(before);
    // Replacing one key in the same request fits.
    const swapped = await t.client.beta.sessions.update(session.id, {
      metadata: { k0: null, one_more: "v" },
    });
    expect(Object.keys(swapped.metadata)).toHaveLength(16);
  });

  it("an unknown event type is rejected with the accepted types listed", async () => {
    const before = await snapshot(sessionId);
    await expectApiError(
      t.client.beta.sessions.events.send(sessionId, {
        events: [{ type: "user.shout", content: [] } as unknown as ReturnType<typeof userMessage>],
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/unknown event type "user.shout"/, /"user.message"/] },
    );
    // One bad event in a batch rejects the whole batch: the good message before it is not stored.
    await expectApiError(
      t.client.beta.sessions.events.send(sessionId, {
        events: [userMessage("ok"), { type: "user.tool_result", tool_use_id: "sevt_x" }],
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/self_hosted/, "sevt_x"] },
    );
    expect(await snapshot(sessionId)).toEqual(before);
  });

  it("a second user.custom_tool_result for the same id is rejected and changes nothing", async () => {
    const { session } = await createSession(t.client, { tools: [WEATHER_TOOL] });
    const reader = await StreamReader.open(t.client, session.id);
    const turn = await runTurn(
      t.client,
      reader,
      session.id,
      'call get_weather {"city":"Oslo"}',
      (e) => e.type === "session.status_idle",
    );
    const toolUseId = turn.find((e) => e.type === "agent.custom_tool_use")?.id as string;
    const result = { type: "user.custom_tool_result" as const, custom_tool_use_id: toolUseId };
    await t.client.beta.sessions.events.send(session.id, { events: [result] });
    await reader.until(isEndTurnIdle, { from: reader.events.length });
    await reader.close();
    const before = await snapshot(session.id);
    await expectApiError(
      t.client.beta.sessions.events.send(session.id, { events: [result] }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [toolUseId, /already answered/],
      },
    );
    expect(await snapshot(session.id)).toEqual(before);
  });

  it("input to an archived (terminated) session is rejected and says to create a new session", async () => {
    const { session } = await createSession(t.client);
    const archived = await t.client.beta.sessions.archive(session.id);
    expect(archived.status).toBe("terminated");
    const before = await snapshot(session.id);
    await expectApiError(
      t.client.beta.sessions.events.send(session.id, { events: [userMessage("anyone there?")] }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [session.id, /terminated/, /create a new session/] },
    );
    expect(await snapshot(session.id)).toEqual(before);
  });

  it("a page cursor that this list did not produce is a 400, never a silent restart from page one", async () => {
    const sessionsPage = await t.client.beta.sessions.list({ limit: 1, include_archived: true });
    await createSession(t.client);
    const foreign = (await t.client.beta.sessions.list({ limit: 1 })).next_page;
    expect(sessionsPage.data.length).toBe(1);
    expect(foreign).toBeTruthy();
    for (const page of ["garbage", foreign as string]) {
      await expectApiError(t.client.beta.agents.list({ page }), Anthropic.BadRequestError, {
        status: 400,
        type: "invalid_request_error",
        message: ["page: not a cursor returned by this list"],
      });
    }
    await expectApiError(
      t.client.beta.sessions.events.list(sessionId, { page: "garbage" }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: ["next_page"] },
    );
  });

  it("an agent update with a stale version is a 409 the SDK must not retry, and changes nothing", async () => {
    const agent = await t.client.beta.agents.create({ name: "Versioned", model: MODEL });
    await t.client.beta.agents.update(agent.id, { version: 1, description: "v2" });
    const before = await t.client.beta.agents.retrieve(agent.id);
    const retrying = new Anthropic({ baseURL: t.server.url, apiKey: TEST_API_KEY, maxRetries: 2 });
    const started = Date.now();
    const error = await expectApiError(
      retrying.beta.agents.update(agent.id, { version: 1, description: "lost update" }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: [/version 2/, /not 1/, /retrieve it/] },
    );
    expect(error.headers?.get("x-should-retry")).toBe("false");
    expect(Date.now() - started).toBeLessThan(400); // no 0.5 s back-off: no retry happened
    expect(await t.client.beta.agents.retrieve(agent.id)).toEqual(before);
    const versions = await t.client.beta.agents.versions.list(agent.id);
    expect(versions.data.map((v) => v.version)).toEqual([2, 1]);
  });

  it("environment updates: a config type change and an archived environment get their SDK error classes", async () => {
    const env = await t.client.beta.environments.create({ name: "typed", config: { type: "cloud" } });
    const change = await expectApiError(
      t.client.beta.environments.update(env.id, { config: { type: "self_hosted" } }),
      Anthropic.Beta.BetaInvalidConfigTypeChangeError,
      { ...BAD_REQUEST, message: [/"cloud"/, /"self_hosted"/, /create a new environment/] },
    );
    expect(change.errorCode).toBe("invalid_config_type_change");
    expect((change.error as { error: { details: { error_code: string } } }).error.details.error_code).toBe(
      "invalid_config_type_change",
    );
    expect(await t.client.beta.environments.retrieve(env.id)).toEqual(env);

    const archived = await t.client.beta.environments.archive(env.id);
    const update = await expectApiError(
      t.client.beta.environments.update(env.id, { name: "renamed" }),
      Anthropic.Beta.BetaEnvironmentArchivedError,
      { ...BAD_REQUEST, message: [env.id, /archived/] },
    );
    expect(update.errorCode).toBe("environment_archived");
    expect(await t.client.beta.environments.retrieve(env.id)).toEqual(archived);

    const sessionsBefore = (await t.client.beta.sessions.list({ include_archived: true, limit: 100 })).data
      .length;
    const create = await expectApiError(
      t.client.beta.sessions.create({ agent: agentId, environment_id: env.id }),
      Anthropic.Beta.BetaEnvironmentArchivedError,
      { ...BAD_REQUEST, message: [env.id, /archived/, /another environment/] },
    );
    expect(create.errorCode).toBe("environment_archived");
    expect((await t.client.beta.sessions.list({ include_archived: true, limit: 100 })).data).toHaveLength(
      sessionsBefore,
    );
  });
});

describe("authentication and protocol headers", () => {
  it("a wrong API key is a 401 authentication_error", async () => {
    const wrong = new Anthropic({ baseURL: t.server.url, apiKey: "sk-wrong", maxRetries: 0 });
    await expectApiError(wrong.beta.agents.list(), Anthropic.AuthenticationError, {
      status: 401,
      type: "authentication_error",
      message: [/Invalid API key/],
    });
    const response = await rawRequest(t, "GET", "/v1/agents", {
      auth: false,
      headers: { "x-api-key": "sk-wrong" },
    });
    expectRawError(response, 401, "authentication_error");
  });

  it("no API key is a 401 that says how to send one", async () => {
    const response = await rawRequest(t, "POST", "/v1/agents", {
      auth: false,
      body: JSON.stringify({ name: "x", model: MODEL }),
    });
    const message = expectRawError(response, 401, "authentication_error");
    expect(message).toMatch(/Authorization: Bearer/);
    expect(message).toMatch(/x-api-key/);
    const agents = await t.client.beta.agents.list({ limit: 100 });
    expect(agents.data.some((a) => a.name === "x")).toBe(false);
  });

  it("both Authorization: Bearer and x-api-key are accepted, as are both anthropic-version values", async () => {
    for (const version of ["2026-10-21", "2023-06-01"]) {
      const bearer = await rawRequest(t, "GET", "/v1/agents?limit=1", {
        headers: { "anthropic-version": version },
      });
      expect(bearer.status).toBe(200);
      const apiKey = await rawRequest(t, "GET", "/v1/agents?limit=1", {
        auth: false,
        headers: { "x-api-key": TEST_API_KEY, "anthropic-version": version },
      });
      expect(apiKey.status).toBe(200);
      expect(apiKey.headers.get("content-type")).toMatch(/^application\/json/);
      expect(apiKey.headers.get("request-id")).toMatch(/^req_/);
    }
    const legacy = new Anthropic({
      baseURL: t.server.url,
      apiKey: TEST_API_KEY,
      maxRetries: 0,
      defaultHeaders: { "anthropic-version": "2023-06-01" },
    });
    const agent = await legacy.beta.agents.create({ name: "Legacy header", model: MODEL });
    expect(agent._request_id).toMatch(/^req_/);
  });

  it("an unknown route is a JSON 404 in the envelope", async () => {
    const response = await rawRequest(t, "GET", "/v1/nothing-here");
    expect(expectRawError(response, 404, "not_found_error")).toMatch(/\/v1\/nothing-here/);
  });
});
