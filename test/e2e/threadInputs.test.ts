/**
 * A client's inputs reach a session's child threads, over the SDK on both backends: an interrupt
 * without a thread stops the parent and every working child (each child's late commit is fenced
 * out, the parent waits for none); an interrupt naming a child stops that child alone and its
 * parent goes on with an error result for it; a child's permission ask is cross-posted on the
 * primary stream, and a confirmation sent without a thread id is routed to the child by its call's
 * id and resumes it, so the parent finishes.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  BAD_REQUEST,
  expectApiError,
  history,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  StreamReader,
  sleep,
  stopReason,
  textOf,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
/** Per streamed delta: a child's one-sentence answer takes well over a second to stream. */
const DELAY_MS = 250;
const SPAWN = 'call spawn_agent {"agent_name":"researcher","message":"find A"}';

describe.each(BACKENDS)("inputs reach child threads on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer({ ...(schema ? { databaseUrl: schema.url } : {}), allowWeakerTiers: true });
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });
  afterEach(() => {
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
  });

  /** A lead whose roster is one researcher (its bash tool asks first, or it has a custom tool). */
  async function leadSession(tools?: "bash_asks" | "custom"): Promise<string> {
    const researcher = await client.beta.agents.create({
      name: "researcher",
      model: MODEL,
      ...(tools === "bash_asks"
        ? {
            tools: [
              {
                type: "agent_toolset_20260401",
                configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
              },
            ] as never,
          }
        : tools === "custom"
          ? { tools: [WEATHER_TOOL] }
          : {}),
    });
    const lead = await client.beta.agents.create({
      name: "lead",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "enabled", predefined_agents: [researcher.id] },
      },
    });
    const environment = await client.beta.environments.create({
      name: "thread-inputs",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environment.id });
    return session.id;
  }

  const threadEvents = async (sessionId: string, threadId: string) =>
    (await all(
      client.beta.sessions.threads.events.list(threadId, { session_id: sessionId }),
    )) as unknown as WireEvent[];

  /** Starts the lead's turn that spawns the researcher; resolves once the child runs. */
  async function spawnAndWaitRunning(sessionId: string, stream: StreamReader): Promise<string> {
    process.env.AWAKEN_OFFLINE_DELAY_MS = String(DELAY_MS);
    await client.beta.sessions.events.send(sessionId, { events: [userMessage(SPAWN)] });
    const running = await stream.until((e) => e.type === "session.thread_status_running", {
      timeoutMs: 20_000,
    });
    return String(running.session_thread_id);
  }

  it("an interrupt without a thread stops the parent and the working child; the child's late output is fenced out", async () => {
    const sessionId = await leadSession();
    const stream = await StreamReader.open(client, sessionId);
    try {
      const child = await spawnAndWaitRunning(sessionId, stream);
      const from = stream.events.length;
      const sent = (
        await client.beta.sessions.events.send(sessionId, { events: [{ type: "user.interrupt" }] })
      ).data as unknown as WireEvent[];
      expect(sent.map((e) => e.type)).toEqual(["user.interrupt"]);
      expect(sent[0]?.session_thread_id).toBeUndefined();
      const idle = await stream.until((e) => e.type === "session.status_idle", { from });
      expect(isEndTurnIdle(idle)).toBe(true);
      const after = stream.events.slice(from, stream.events.indexOf(idle) + 1);
      // The parent sees its child stopped, then goes idle itself: it waits for no answer.
      expect(after.map((e) => e.type)).toEqual([
        "user.interrupt",
        "session.thread_status_idle",
        "session.status_idle",
      ]);
      expect(after[1]).toMatchObject({ session_thread_id: child, stop_reason: { type: "end_turn" } });

      // Outlive the child's reply: had its run not been fenced out, its answer would be committed by now.
      await sleep(DELAY_MS * 12);
      const own = await threadEvents(sessionId, child);
      expect(own.slice(-2).map((e) => e.type)).toEqual(["user.interrupt", "session.status_idle"]);
      expect(own.some((e) => e.type === "agent.message")).toBe(false);
      const primary = (await history(client, sessionId)).map((e) => e.type);
      expect(primary.at(-1)).toBe("session.status_idle");
      expect(primary).not.toContain("agent.thread_message_received");

      const threads = await all(client.beta.sessions.threads.list(sessionId));
      expect(threads.map((th) => th.status)).toEqual(["idle", "idle"]);
      expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("idle");

      // The session takes new input: its next turn ends as any other.
      delete process.env.AWAKEN_OFFLINE_DELAY_MS;
      const next = stream.events.length;
      await client.beta.sessions.events.send(sessionId, { events: [userMessage("after the interrupt")] });
      const end = await stream.until(isEndTurnIdle, { from: next });
      // The parent's model reads its interrupted spawning call as closed (the offline model answers
      // the result it finds in the request's last message).
      const answer = stream.events
        .slice(next, stream.events.indexOf(end))
        .findLast((e) => e.type === "agent.message");
      expect(textOf(answer)).toContain("The user interrupted before this tool returned a result.");
    } finally {
      await stream.close();
    }
  });

  it("an interrupt naming a child stops it alone: the parent gets an error result for it and finishes its turn", async () => {
    const sessionId = await leadSession();
    const stream = await StreamReader.open(client, sessionId);
    try {
      const child = await spawnAndWaitRunning(sessionId, stream);
      await expectApiError(
        client.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.interrupt", session_thread_id: "sthr_nope" }],
        }),
        Anthropic.NotFoundError,
        { ...NOT_FOUND, message: ["sthr_nope"] },
      );
      const from = stream.events.length;
      const sent = (
        await client.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.interrupt", session_thread_id: child }],
        })
      ).data as unknown as WireEvent[];
      expect(sent).toMatchObject([{ type: "user.interrupt", session_thread_id: child }]);
      delete process.env.AWAKEN_OFFLINE_DELAY_MS;
      const end = await stream.until(isEndTurnIdle, { from, timeoutMs: 20_000 });
      const turn = stream.events.slice(from, stream.events.indexOf(end) + 1);
      const types = turn.map((e) => e.type);
      // The unknown thread wrote nothing; the child's interrupt answered its spawning call.
      expect(types.slice(0, 3)).toEqual([
        "session.thread_status_idle",
        "agent.thread_message_received",
        "agent.tool_result",
      ]);
      expect(turn[2]).toMatchObject({ is_error: true });
      expect(textOf(turn[2])).toContain("the user interrupted it");
      expect(textOf(turn.findLast((e) => e.type === "agent.message"))).toContain(
        "Tool result received (error): (the subagent stopped: the user interrupted it)",
      );
      expect(types.filter((ty) => ty === "session.status_idle")).toHaveLength(1);

      const own = await threadEvents(sessionId, child);
      expect(own.slice(-2).map((e) => e.type)).toEqual(["user.interrupt", "session.status_idle"]);
      expect(own.at(-2)).toMatchObject({ session_thread_id: child });
      await sleep(DELAY_MS * 4);
      expect((await threadEvents(sessionId, child)).length).toBe(own.length);

      // An archived child takes no interrupt; nothing is written.
      await client.beta.sessions.threads.archive(child, { session_id: sessionId });
      const before = (await history(client, sessionId)).length;
      await expectApiError(
        client.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.interrupt", session_thread_id: child }],
        }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [child, /archived/] },
      );
      expect((await history(client, sessionId)).length).toBe(before);
    } finally {
      await stream.close();
    }
  });

  it("a child's permission ask shows on the primary stream; a confirmation without a thread id resumes the child and the parent finishes", async () => {
    const sessionId = await leadSession("bash_asks");
    const stream = await StreamReader.open(client, sessionId);
    try {
      await client.beta.sessions.events.send(sessionId, {
        events: [userMessage('call spawn_agent {"agent_name":"researcher","message":"call bash"}')],
      });
      // The lead's own spawn_agent call is an agent.tool_use too; the child's ask names its thread.
      const ask = await stream.until(
        (e) => e.type === "agent.tool_use" && e.session_thread_id !== undefined,
        {
          timeoutMs: 20_000,
        },
      );
      const child = String(ask.session_thread_id);
      expect(child).toMatch(/^sthr_/);
      expect(ask).toMatchObject({ name: "bash", evaluated_permission: "ask" });
      const waiting = await stream.until((e) => e.type === "session.thread_status_idle");
      expect(waiting).toMatchObject({ session_thread_id: child, agent_name: "researcher" });
      expect(stopReason(waiting)).toEqual({ type: "requires_action", event_ids: [ask.id] });
      // The ask is the child's own call, by id; the session still works (its child waits).
      const own = await threadEvents(sessionId, child);
      expect(own.find((e) => e.type === "agent.tool_use")?.id).toBe(ask.id);
      expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("running");
      const childThread = await client.beta.sessions.threads.retrieve(child, { session_id: sessionId });
      expect(childThread.status).toBe("idle");

      const from = stream.events.length;
      const sent = (
        await client.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.tool_confirmation", tool_use_id: ask.id, result: "allow" }],
        })
      ).data as unknown as WireEvent[];
      expect(sent).toMatchObject([
        { type: "user.tool_confirmation", tool_use_id: ask.id, result: "allow", session_thread_id: child },
      ]);
      const end = await stream.until(isEndTurnIdle, { from, timeoutMs: 20_000 });
      const turn = stream.events.slice(from, stream.events.indexOf(end) + 1).map((e) => e.type);
      expect(turn[0]).toBe("session.thread_status_running");
      // The child answered; the parent's model then answered from its spawning call's result.
      expect(turn.lastIndexOf("agent.message")).toBeGreaterThan(
        turn.indexOf("agent.thread_message_received"),
      );
      expect(turn.indexOf("agent.thread_message_received")).toBeGreaterThan(0);

      // The confirmation is on the child's history (routed there), and the child ran the tool.
      const after = await threadEvents(sessionId, child);
      const confirmation = after.find((e) => e.type === "user.tool_confirmation");
      expect(confirmation).toMatchObject({ tool_use_id: ask.id, session_thread_id: child });
      expect(after.some((e) => e.type === "agent.tool_result" && e.tool_use_id === ask.id)).toBe(true);
      // A second answer for the call is refused: nothing waits for it any more.
      await expectApiError(
        client.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.tool_confirmation", tool_use_id: ask.id, result: "allow" }],
        }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [ask.id] },
      );
      const session = await client.beta.sessions.retrieve(sessionId);
      expect(session.status).toBe("idle");
    } finally {
      await stream.close();
    }
  });

  it("a child's custom tool call shows on the primary stream; its result sent without a thread id reaches the child", async () => {
    const sessionId = await leadSession("custom");
    const stream = await StreamReader.open(client, sessionId);
    try {
      await client.beta.sessions.events.send(sessionId, {
        events: [userMessage('call spawn_agent {"agent_name":"researcher","message":"call get_weather"}')],
      });
      const use = await stream.until((e) => e.type === "agent.custom_tool_use", { timeoutMs: 20_000 });
      const child = String(use.session_thread_id);
      expect(child).toMatch(/^sthr_/);
      const waiting = await stream.until((e) => e.type === "session.thread_status_idle");
      expect(stopReason(waiting)).toEqual({ type: "requires_action", event_ids: [use.id] });
      // The session's own pending answers stay its own: the child's call is not the primary's.
      expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("running");

      const from = stream.events.length;
      const sent = (
        await client.beta.sessions.events.send(sessionId, {
          events: [
            {
              type: "user.custom_tool_result",
              custom_tool_use_id: use.id,
              content: [{ type: "text", text: "sunny" }],
            },
          ],
        })
      ).data as unknown as WireEvent[];
      expect(sent).toMatchObject([
        { type: "user.custom_tool_result", custom_tool_use_id: use.id, session_thread_id: child },
      ]);
      const end = await stream.until(isEndTurnIdle, { from, timeoutMs: 20_000 });
      const turn = stream.events.slice(from, stream.events.indexOf(end) + 1);
      const received = turn.find((e) => e.type === "agent.thread_message_received");
      expect(textOf(received)).toContain("Tool result received: sunny");
      const own = await threadEvents(sessionId, child);
      expect(own.find((e) => e.type === "user.custom_tool_result")).toMatchObject({
        session_thread_id: child,
      });
    } finally {
      await stream.close();
    }
  });
});
