import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  BAD_REQUEST,
  createSession,
  expectApiError,
  history,
  idsOf,
  isEndTurnIdle,
  NOT_FOUND,
  RFC3339,
  runTurn,
  StreamReader,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;

describe.each(BACKENDS)("session threads over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer(schema ? { databaseUrl: schema.url } : {});
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  const threadsOf = (sessionId: string, params: Anthropic.Beta.Sessions.ThreadListParams = {}) =>
    all(client.beta.sessions.threads.list(sessionId, params));

  it("a new session lists its primary thread: no parent, idle, no stats or usage before anything ran", async () => {
    const { session } = await createSession(client);
    const threads = await threadsOf(session.id);
    expect(threads).toHaveLength(1);
    const [primary] = threads as [Anthropic.Beta.Sessions.BetaManagedAgentsSessionThread];
    expect(primary).toMatchObject({
      type: "session_thread",
      session_id: session.id,
      parent_thread_id: null,
      workflow_run_id: null,
      status: "idle",
      stats: null,
      usage: null,
      archived_at: null,
    });
    expect(primary.id).toMatch(/^sthr_/);
    expect(primary.created_at).toMatch(RFC3339);
    expect(primary.updated_at).toMatch(RFC3339);
    // The thread's agent is the session's snapshot, without the roster (the SDK reads that off the session).
    const { multiagent: _roster, ...sessionAgent } = session.agent as unknown as Record<string, unknown>;
    expect(primary.agent).toEqual(sessionAgent);
    expect(await client.beta.sessions.threads.retrieve(primary.id, { session_id: session.id })).toEqual(
      primary,
    );
  });

  it("a thread's status, usage and events are its committed facts: list and stream match the session's", async () => {
    const { session } = await createSession(client);
    const [primary] = await threadsOf(session.id);
    const threadId = (primary as { id: string }).id;
    const sessionStream = await StreamReader.open(client, session.id);
    const threadStream = await StreamReader.openThread(client, session.id, threadId);
    await runTurn(client, sessionStream, session.id, "hello thread");
    await threadStream.until(isEndTurnIdle);
    await sessionStream.close();
    await threadStream.close();

    const sessionEvents = await history(client, session.id);
    const threadEvents = (await all(
      client.beta.sessions.threads.events.list(threadId, { session_id: session.id, limit: 2 }),
    )) as unknown as WireEvent[];
    expect(threadEvents.length).toBeGreaterThan(3);
    expect(idsOf(threadEvents)).toEqual(idsOf(sessionEvents));
    expect(threadEvents).toEqual(sessionEvents);
    expect(idsOf(threadStream.events)).toEqual(idsOf(sessionStream.events));
    expect(threadStream.events.map((e) => e.type)).toContain("agent.message");

    const after = await client.beta.sessions.threads.retrieve(threadId, { session_id: session.id });
    expect(after.status).toBe("idle");
    expect(after.stats?.duration_seconds).toBeGreaterThanOrEqual(0);
    const retrieved = await client.beta.sessions.retrieve(session.id);
    // The primary thread's usage and running time are the session's (one thread ran).
    expect(after.usage).toEqual(retrieved.usage);
    expect(after.stats?.active_seconds).toBe(retrieved.stats?.active_seconds);
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(after.created_at) - 1);
  });

  it("statuses[] keeps the threads of those statuses; a page cursor from another list is refused", async () => {
    const { session } = await createSession(client);
    expect(await threadsOf(session.id, { statuses: ["running", "rescheduling"] })).toEqual([]);
    expect(await threadsOf(session.id, { statuses: ["idle"] })).toHaveLength(1);
    const first = await client.beta.sessions.threads.list(session.id, { limit: 1 });
    expect(first.data).toHaveLength(1);
    expect(first.hasNextPage()).toBe(false);
    await expectApiError(
      client.beta.sessions.threads.list(session.id, { page: "bm90LWEtY3Vyc29y" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["page"] },
    );
    await expectApiError(
      client.beta.sessions.threads.list(session.id, { statuses: ["paused" as "idle"] }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["paused"] },
    );
  });

  it("an unknown thread, another session's thread or an unknown session is not found", async () => {
    const a = await createSession(client);
    const b = await createSession(client);
    const [threadOfB] = await threadsOf(b.session.id);
    const bThread = (threadOfB as { id: string }).id;
    await expectApiError(
      client.beta.sessions.threads.retrieve(bThread, { session_id: a.session.id }),
      Anthropic.NotFoundError,
      { ...NOT_FOUND, message: [bThread] },
    );
    await expectApiError(
      client.beta.sessions.threads.retrieve("sthr_unknown", { session_id: a.session.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.sessions.threads.events.list(bThread, { session_id: a.session.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.sessions.threads.events.stream(bThread, { session_id: a.session.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.sessions.threads.archive(bThread, { session_id: a.session.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.sessions.threads.list("sesn_unknown"),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
  });

  it("archiving the primary thread is refused (archive the session); an archived session's thread reads terminated and archived", async () => {
    const { session } = await createSession(client);
    const [primary] = await threadsOf(session.id);
    const threadId = (primary as { id: string }).id;
    await expectApiError(
      client.beta.sessions.threads.archive(threadId, { session_id: session.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["primary thread", "archive the session"] },
    );
    const archived = await client.beta.sessions.archive(session.id);
    const thread = await client.beta.sessions.threads.retrieve(threadId, { session_id: session.id });
    expect(thread.status).toBe("terminated");
    expect(thread.archived_at).toBe(archived.archived_at);
    expect(await threadsOf(session.id, { statuses: ["idle"] })).toEqual([]);
    expect(idsOf(await threadsOf(session.id, { statuses: ["terminated"] }))).toEqual([threadId]);
    await expectApiError(
      client.beta.sessions.threads.archive(threadId, { session_id: session.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["primary thread"] },
    );
  });

  it("an access token confined to one session reads that session's threads only, and cannot archive one", async () => {
    const post = async (path: string, key: string, body: unknown) => {
      const response = await fetch(`${t?.server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, string>;
    };
    const backend = await post("/v1/awaken/api_keys", TEST_API_KEY, { role: "runtime", label: "backend" });
    const server = new Anthropic({ apiKey: backend.key, baseURL: t?.server.url, maxRetries: 0 });
    const { agent, environment } = await createSession(client);
    const open = () => server.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    const mine = { session: await open() };
    const theirs = { session: await open() };
    const { token } = await post("/v1/awaken/access_tokens", backend.key as string, {
      operations: ["read", "send"],
      session_id: mine.session.id,
      ttl_seconds: 600,
    });
    const browser = new Anthropic({ apiKey: token, baseURL: t?.server.url, maxRetries: 0 });
    const [primary] = await all(browser.beta.sessions.threads.list(mine.session.id));
    const threadId = (primary as { id: string }).id;
    expect((await browser.beta.sessions.threads.retrieve(threadId, { session_id: mine.session.id })).id).toBe(
      threadId,
    );
    await expectApiError(
      browser.beta.sessions.threads.list(theirs.session.id),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      browser.beta.sessions.threads.archive(threadId, { session_id: mine.session.id }),
      Anthropic.PermissionDeniedError,
      { status: 403, type: "permission_error" },
    );
    // The runtime key that minted it may ask: the answer is the primary thread's rule.
    await expectApiError(
      server.beta.sessions.threads.archive(threadId, { session_id: mine.session.id }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
  });

  /**
   * Writes to the server's own database, for what no route makes yet: a child thread (nothing
   * spawns one over the wire so far) and the commits that move its status.
   */
  async function write(statement: string, params: unknown[]): Promise<void> {
    if (backend === "SQLite") {
      const db = new Database(join(t?.dataDir as string, "awaken.db"));
      try {
        db.prepare(statement).run(...params);
      } finally {
        db.close();
      }
      return;
    }
    const client = new pg.Client({ connectionString: schema?.url });
    await client.connect();
    try {
      let n = 0;
      await client.query(
        statement.replace(/\?/g, () => `$${++n}`),
        params,
      );
    } finally {
      await client.end();
    }
  }

  async function childThread(sessionId: string, parentId: string, agentId: string): Promise<string> {
    const id = `${parentId}child`;
    await write(
      `insert into threads (id, session_id, created_at, parent_thread_id, agent_name, agent_snapshot_json, archived_at)
       select ?, ?, ?, ?, ?, ea.snapshot_json, null from executable_agents ea where ea.agent_id = ? and ea.version = 1`,
      [id, sessionId, Date.now(), parentId, "researcher", agentId],
    );
    return id;
  }

  async function commitStatus(threadId: string, sessionId: string, base: number, status: "running" | "idle") {
    const fact =
      status === "running"
        ? ["session.status_running", {}]
        : ["session.status_idle", { stop_reason: { type: "end_turn" }, stop_details: null }];
    await write(
      `insert into commits (thread_id, base_version, version, session_id, facts_json, created_at, status, pending_json, usage_json)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        threadId,
        base,
        base + 1,
        sessionId,
        JSON.stringify([[`sevt_${status}${base}`, ...fact]]),
        Date.now(),
        status,
        "[]",
        "{}",
      ],
    );
  }

  it("a child thread shows its parent and its own agent; it is archived only once it no longer works (409 before)", async () => {
    const { session } = await createSession(client);
    const researcher = await client.beta.agents.create({
      name: "researcher",
      model: "claude-sonnet-4-6",
      system: "dig",
    });
    const [primary] = await threadsOf(session.id);
    const primaryId = (primary as { id: string }).id;
    const childId = await childThread(session.id, primaryId, researcher.id);
    await commitStatus(childId, session.id, 0, "running");

    const threads = await threadsOf(session.id);
    expect(idsOf(threads)).toEqual([primaryId, childId]);
    const child = await client.beta.sessions.threads.retrieve(childId, { session_id: session.id });
    expect(child).toMatchObject({ parent_thread_id: primaryId, status: "running", archived_at: null });
    expect(child.agent).toMatchObject({
      type: "agent",
      id: researcher.id,
      version: 1,
      name: "researcher",
      system: "dig",
    });
    expect(child.stats).not.toBeNull();
    expect(idsOf(await threadsOf(session.id, { statuses: ["running"] }))).toEqual([childId]);
    // Its events are its own history, apart from the session's.
    const childEvents = await all(
      client.beta.sessions.threads.events.list(childId, { session_id: session.id }),
    );
    expect(childEvents.map((e) => e.type)).toEqual(["session.status_running"]);
    expect(idsOf(await history(client, session.id))).not.toContain(childEvents[0]?.id);

    await expectApiError(
      client.beta.sessions.threads.archive(childId, { session_id: session.id }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: ["running", "interrupt"] },
    );
    await commitStatus(childId, session.id, 1, "idle");
    const archived = await client.beta.sessions.threads.archive(childId, { session_id: session.id });
    expect(archived.archived_at).toMatch(RFC3339);
    expect(archived.status).toBe("terminated");
    expect(archived.parent_thread_id).toBe(primaryId);
    const again = await client.beta.sessions.threads.archive(childId, { session_id: session.id });
    expect(again.archived_at).toBe(archived.archived_at);
    expect(idsOf(await threadsOf(session.id, { statuses: ["terminated"] }))).toEqual([childId]);
    expect(idsOf(await threadsOf(session.id, { statuses: ["idle"] }))).toEqual([primaryId]);
    // The session itself is untouched by its child's archive.
    expect((await client.beta.sessions.retrieve(session.id)).archived_at).toBeNull();
  });
});
