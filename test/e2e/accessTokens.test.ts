/**
 * Application access tokens through the official SDK over real HTTP (the token as the client's
 * apiKey): a backend with an API key mints one for a browser; it reaches exactly what it was
 * minted for, never more than its minter; it expires; revoking the minter ends it; it mints
 * nothing; and other edges take it where they take an API key. A token confined to a session
 * namespace reaches and creates only sessions bound to a client name under it.
 */
import Anthropic, { AuthenticationError, NotFoundError, PermissionDeniedError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agUiAgent, recordRun, say } from "../support/agUiAgent.js";
import { aiSdkChat } from "../support/aiSdkChat.js";
import { connectMcp } from "../support/mcpClient.js";
import { OffsetClock } from "../support/offsetClock.js";
import { isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
const clock = new OffsetClock();
let agentId: string;
let otherAgent: string;
let environmentId: string;

beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50, clock });
  agentId = (await t.client.beta.agents.create({ name: "support", model: MODEL })).id;
  otherAgent = (await t.client.beta.agents.create({ name: "internal", model: MODEL })).id;
  environmentId = (await t.client.beta.environments.create({ name: "tokens" })).id;
});
afterAll(() => t.close());

async function call(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function mintKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const { status, json } = await call("POST", "/v1/awaken/api_keys", TEST_API_KEY, body);
  expect(status, JSON.stringify(json)).toBe(200);
  return json as unknown as { id: string; key: string };
}

async function mintToken(by: string, body: Record<string, unknown>): Promise<string> {
  const { status, json } = await call("POST", "/v1/awaken/access_tokens", by, body);
  expect(status, JSON.stringify(json)).toBe(200);
  expect(json.token).toMatch(/^awt_/);
  return json.token as string;
}

const clientOf = (key: string) => new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });

describe("application access tokens", () => {
  it("a token confined to one session works there and nowhere else; it cannot manage, create or mint", async () => {
    const backend = await mintKey({ role: "runtime", label: "backend" });
    const server = clientOf(backend.key);
    const mine = await server.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    const theirs = await server.beta.sessions.create({ agent: agentId, environment_id: environmentId });

    const token = await mintToken(backend.key, {
      operations: ["read", "send"],
      session_id: mine.id,
      ttl_seconds: 600,
    });
    const browser = clientOf(token);
    expect((await browser.beta.sessions.retrieve(mine.id)).id).toBe(mine.id);
    await browser.beta.sessions.events.send(mine.id, { events: [userMessage("from the browser")] });
    await waitForHistory(browser, mine.id, (h) => h.some(isEndTurnIdle), 15_000);
    expect((await browser.beta.sessions.list()).data.map((s) => s.id)).toEqual([mine.id]);

    await expect(browser.beta.sessions.retrieve(theirs.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      browser.beta.sessions.events.send(theirs.id, { events: [userMessage("intrude")] }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(browser.beta.sessions.events.list(theirs.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      browser.beta.sessions.create({ agent: agentId, environment_id: environmentId }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(browser.beta.sessions.archive(mine.id)).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(browser.beta.agents.list()).rejects.toBeInstanceOf(PermissionDeniedError);

    // A token mints neither tokens nor keys.
    const again = await call("POST", "/v1/awaken/access_tokens", token, { operations: ["read"] });
    expect(again.status).toBe(403);
    expect(JSON.stringify(again.json)).toMatch(/cannot mint access tokens/);
    expect((await call("POST", "/v1/awaken/api_keys", token, { role: "runtime" })).status).toBe(403);
    // Nothing reached the other session.
    const events = await server.beta.sessions.events.list(theirs.id);
    expect(events.data.filter((e) => e.type === "user.message")).toEqual([]);
  });

  it("a token never exceeds its minter: its agents, its workspace; a read-only token sends nothing", async () => {
    const limited = await mintKey({ role: "runtime", agent_ids: [agentId] });
    const outside = await call("POST", "/v1/awaken/access_tokens", limited.key, {
      operations: ["read", "send", "create"],
      agent_ids: [otherAgent],
    });
    expect(outside.status).toBe(404);
    const otherSession = await t.client.beta.sessions.create({
      agent: otherAgent,
      environment_id: environmentId,
    });
    const confinedOutside = await call("POST", "/v1/awaken/access_tokens", limited.key, {
      operations: ["read"],
      session_id: otherSession.id,
    });
    expect(confinedOutside.status).toBe(404);

    // Without agent_ids the token takes the minter's list, not every agent.
    const token = await mintToken(limited.key, { operations: ["read", "send", "create"] });
    const browser = clientOf(token);
    const own = await browser.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    await expect(
      browser.beta.sessions.create({ agent: otherAgent, environment_id: environmentId }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(browser.beta.sessions.retrieve(otherSession.id)).rejects.toBeInstanceOf(NotFoundError);

    const readOnly = clientOf(await mintToken(limited.key, { operations: ["read"], session_id: own.id }));
    expect((await readOnly.beta.sessions.retrieve(own.id)).id).toBe(own.id);
    const refused = await readOnly.beta.sessions.events
      .send(own.id, { events: [userMessage("no")] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    expect((refused as PermissionDeniedError).message).toMatch(/does not grant ..?send/);

    // Another workspace's token reaches none of this one.
    const teamAdmin = await mintKey({ role: "admin", workspace_id: "wrkspc_tokens-b" });
    const teamToken = clientOf(await mintToken(teamAdmin.key, { operations: ["read", "send", "create"] }));
    await expect(teamToken.beta.sessions.retrieve(own.id)).rejects.toBeInstanceOf(NotFoundError);

    for (const body of [
      { operations: [] },
      { operations: ["admin"] },
      { operations: ["read"], ttl_seconds: 901 },
      { operations: ["read"], ttl_seconds: 0 },
      { operations: ["read", "create"], session_id: own.id },
      { operations: ["read"], role: "admin" },
    ]) {
      expect(
        (await call("POST", "/v1/awaken/access_tokens", limited.key, body)).status,
        JSON.stringify(body),
      ).toBe(400);
    }
  });

  it("an expired token is refused; revoking the minter ends its tokens at once", async () => {
    const backend = await mintKey({ role: "runtime" });
    const session = await clientOf(backend.key).beta.sessions.create({
      agent: agentId,
      environment_id: environmentId,
    });
    const short = clientOf(
      await mintToken(backend.key, { operations: ["read"], session_id: session.id, ttl_seconds: 1 }),
    );
    expect((await short.beta.sessions.retrieve(session.id)).id).toBe(session.id);
    clock.advance(1_100); // past the 1 s lifetime
    const expired = await short.beta.sessions.retrieve(session.id).catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(AuthenticationError);
    expect((expired as AuthenticationError).message).toMatch(/expired or revoked access token/);

    const long = clientOf(await mintToken(backend.key, { operations: ["read"], session_id: session.id }));
    expect((await long.beta.sessions.retrieve(session.id)).id).toBe(session.id);
    expect((await call("POST", `/v1/awaken/api_keys/${backend.id}/revoke`, TEST_API_KEY)).status).toBe(200);
    await expect(long.beta.sessions.retrieve(session.id)).rejects.toBeInstanceOf(AuthenticationError);

    // A forged or altered token is no token.
    const token = await mintToken(TEST_API_KEY, { operations: ["read"] });
    const [payload, signature] = token.slice(4).split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as Record<string, unknown>;
    const widened = Buffer.from(JSON.stringify({ ...claims, ops: ["read", "send", "create"] })).toString(
      "base64url",
    );
    await expect(clientOf(`awt_${widened}.${signature}`).beta.sessions.list()).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  it("other edges take a token where they take an API key: AI SDK in its session, MCP with its agents", async () => {
    const backend = await mintKey({ role: "runtime", agent_ids: [agentId] });
    const session = await clientOf(backend.key).beta.sessions.create({
      agent: agentId,
      environment_id: environmentId,
    });
    const token = await mintToken(backend.key, { operations: ["read", "send"], session_id: session.id });
    const chat = aiSdkChat({ baseUrl: t.server.url, apiKey: token, id: session.id });
    await chat.chat.sendMessage({ text: "hello from useChat" });
    await chat.waitForFinishes(1);
    expect(chat.errors).toEqual([]);
    expect(chat.sessionId()).toBe(session.id);
    const elsewhere = aiSdkChat({ baseUrl: t.server.url, apiKey: token, body: { agentId } });
    await elsewhere.chat.sendMessage({ text: "a new chat" });
    await elsewhere.waitForFinishes(1);
    expect(elsewhere.errors.length).toBe(1);

    const mcp = await connectMcp(t.server.url, {
      apiKey: await mintToken(backend.key, { operations: ["read", "send", "create"] }),
    });
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools).toHaveLength(1);
      expect(tools[0]!.name.endsWith(agentId.replace(/^agent_/, ""))).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it("a token confined to a session namespace reaches, creates and lists only sessions named under it", async () => {
    const backend = await mintKey({ role: "runtime", label: "namespaces", agent_ids: [agentId] });
    const server = clientOf(backend.key);
    const chatPost = (key: string, id: string, agent = agentId) =>
      fetch(`${t.server.url}/v1/ai-sdk/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          id,
          trigger: "submit-message",
          agentId: agent,
          messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: `hello in ${id}` }] }],
        }),
      });
    // The backend's own sessions: another user's chat, and an unnamed session.
    const theirsResponse = await chatPost(backend.key, "user-7/chat-1");
    expect(theirsResponse.status).toBe(200);
    const theirs = theirsResponse.headers.get("x-awaken-session-id") as string;
    await theirsResponse.text();
    const unnamed = await server.beta.sessions.create({ agent: agentId, environment_id: environmentId });

    const minted = await call("POST", "/v1/awaken/access_tokens", backend.key, {
      operations: ["read", "send", "create"],
      session_namespace: "user-42/",
    });
    expect(minted.status, JSON.stringify(minted.json)).toBe(200);
    // The minter's allow-list bounds it; the namespace is echoed.
    expect(minted.json).toMatchObject({
      session_namespace: "user-42/",
      session_id: null,
      agent_ids: [agentId],
    });
    const token = minted.json.token as string;
    const browser = clientOf(token);

    // A chat under the namespace creates its session, which the token then reads and sends to.
    const chat = aiSdkChat({ baseUrl: t.server.url, apiKey: token, id: "user-42/chat-1", body: { agentId } });
    await chat.chat.sendMessage({ text: "hello from user 42" });
    await chat.waitForFinishes(1);
    expect(chat.errors).toEqual([]);
    const mine = chat.sessionId() as string;
    expect(mine).toMatch(/^sesn_/);
    expect((await browser.beta.sessions.retrieve(mine)).id).toBe(mine);
    await browser.beta.sessions.events.send(mine, { events: [userMessage("again")] });
    await waitForHistory(browser, mine, (h) => h.filter(isEndTurnIdle).length >= 2, 15_000);

    // An AG-UI thread under the namespace too.
    const thread = agUiAgent(t, agentId, "user-42/thread-1", { headers: { "x-api-key": token } });
    say(thread, "hello over AG-UI");
    const run = await recordRun(thread);
    expect(run.runError).toBeUndefined();
    const viaAgUi = (await server.beta.sessions.list()).data.find(
      (s) => s.id !== mine && s.id !== theirs && s.id !== unnamed.id,
    );
    expect(viaAgUi).toBeDefined();

    // Another user's session, an unnamed one: not found, as an unknown id would be.
    for (const id of [theirs, unnamed.id]) {
      await expect(browser.beta.sessions.retrieve(id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(browser.beta.sessions.events.list(id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        browser.beta.sessions.events.send(id, { events: [userMessage("intrude")] }),
      ).rejects.toBeInstanceOf(NotFoundError);
    }
    // By name: the other user's existing chat, a free name outside the namespace, alike.
    expect((await chatPost(token, "user-7/chat-1")).status).toBe(404);
    expect((await chatPost(token, "user-7/x")).status).toBe(404);
    expect((await chatPost(token, theirs)).status).toBe(404);
    // An agent outside the minter's list, even under the namespace.
    expect((await chatPost(token, "user-42/other-agent", otherAgent)).status).toBe(404);
    // No unnamed session.
    const refused = await browser.beta.sessions
      .create({ agent: agentId, environment_id: environmentId })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    expect((refused as PermissionDeniedError).message).toMatch(
      /confined to session names starting with .*user-42\//,
    );

    // Its list holds its namespace's sessions alone; the backend's holds them all.
    const listed = (await browser.beta.sessions.list()).data.map((s) => s.id).sort();
    expect(listed).toEqual([mine, viaAgUi!.id].sort());
    const all = (await server.beta.sessions.list()).data.map((s) => s.id);
    expect(all).toEqual(expect.arrayContaining([mine, viaAgUi!.id, theirs, unnamed.id]));
    // Nothing reached the other sessions.
    for (const id of [theirs, unnamed.id]) {
      const texts = (await server.beta.sessions.events.list(id)).data
        .filter((e) => e.type === "user.message")
        .map((e) => JSON.stringify(e));
      expect(texts.some((text) => text.includes("intrude"))).toBe(false);
    }

    // Without create, a namespace token opens no new name either.
    const readOnly = await mintToken(backend.key, {
      operations: ["read", "send"],
      session_namespace: "user-42/",
    });
    const noCreate = await chatPost(readOnly, "user-42/chat-3");
    expect(noCreate.status).toBe(403);
    expect(await noCreate.text()).toMatch(/does not grant ..?create/);
    expect((await clientOf(readOnly).beta.sessions.retrieve(mine)).id).toBe(mine);

    // A session or a namespace, not both; a namespace must be a printable prefix, no session id's.
    const both = await call("POST", "/v1/awaken/access_tokens", backend.key, {
      operations: ["read"],
      session_id: mine,
      session_namespace: "user-42/",
    });
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.json)).toMatch(/session_id.*session_namespace.*not both/);
    for (const namespace of ["", "user 42/", "sesn_", "x".repeat(129), "üser/", 42]) {
      const bad = await call("POST", "/v1/awaken/access_tokens", backend.key, {
        operations: ["read"],
        session_namespace: namespace,
      });
      expect(bad.status, JSON.stringify(namespace)).toBe(400);
      expect(JSON.stringify(bad.json), JSON.stringify(namespace)).toMatch(/session_namespace/);
    }
  });
});
