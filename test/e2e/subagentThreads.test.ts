/**
 * Subagents over the SDK: a coordinator agent with two predefined subagents spawns both in one
 * answer (the offline model's "in parallel" rule); each child runs as its own claimed, fenced run
 * with its own pinned agent, answers, and its answer lands on the parent's history, which resumes
 * the parent once both have answered; the parent then answers from their messages.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, history, isEndTurnIdle, MODEL, runTurn, StreamReader, textOf } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;

describe.each(BACKENDS)("subagent threads over the SDK on %s", (backend) => {
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

  it("a coordinator spawns two subagents in parallel; both answer; the parent answers from their messages", async () => {
    const researcher = await client.beta.agents.create({
      name: "researcher",
      model: MODEL,
      system: "You research.",
    });
    const writer = await client.beta.agents.create({ name: "writer", model: MODEL });
    const lead = await client.beta.agents.create({
      name: "lead",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "enabled", predefined_agents: [researcher.id, writer.id] },
      },
    });
    // An agent with a roster needs its sandbox before the first tool call (sandbox admission).
    const environment = await client.beta.environments.create({
      name: "subagents",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environment.id });
    const stream = await StreamReader.open(client, session.id);
    try {
      const turn = await runTurn(
        client,
        stream,
        session.id,
        'In parallel: call spawn_agent {"agent_name":"researcher","message":"find A"} and call spawn_agent {"agent_name":"writer","message":"draft B"}',
      );
      const types = turn.map((e) => e.type);
      // The parent's history: the two spawns, then each child's answer, then the parent's own answer.
      expect(types.filter((ty) => ty === "session.thread_created")).toHaveLength(2);
      expect(types.filter((ty) => ty === "agent.thread_message_sent")).toHaveLength(2);
      expect(types.filter((ty) => ty === "agent.thread_message_received")).toHaveLength(2);
      expect(types.filter((ty) => ty === "session.thread_status_running")).toHaveLength(2);
      expect(types.filter((ty) => ty === "session.thread_status_idle")).toHaveLength(2);
      // Each child: created, its task sent, running; later idle with its answer received.
      for (const created of turn.filter((e) => e.type === "session.thread_created")) {
        const own = turn.filter(
          (e) =>
            e.session_thread_id === created.session_thread_id ||
            e.to_session_thread_id === created.session_thread_id ||
            e.from_session_thread_id === created.session_thread_id,
        );
        expect(own.map((e) => e.type)).toEqual([
          "session.thread_created",
          "agent.thread_message_sent",
          "session.thread_status_running",
          "session.thread_status_idle",
          "agent.thread_message_received",
        ]);
      }
      const finalMessage = types.lastIndexOf("agent.message");
      // (A child may answer before its sibling is spawned: the spawns are commits of their own.)
      expect(types.lastIndexOf("agent.thread_message_received")).toBeLessThan(finalMessage);
      // No requires_action while only children are waited for: the one idle is the turn's end.
      expect(turn.filter((e) => e.type === "session.status_idle")).toHaveLength(1);

      const created = turn.filter((e) => e.type === "session.thread_created");
      expect(created.map((e) => e.agent_name).sort()).toEqual(["researcher", "writer"]);
      const received = turn.filter((e) => e.type === "agent.thread_message_received");
      expect(received.map((e) => textOf(e)).sort()).toEqual([
        "[offline model] You said: draft B",
        "[offline model] You said: find A",
      ]);
      // The parent's answer is made of the children's answers (its spawn calls' results).
      const answer = textOf(turn[finalMessage]);
      expect(answer).toContain("[offline model] You said: find A");
      expect(answer).toContain("[offline model] You said: draft B");

      // Three threads: the primary, then the two children, each idle after its turn, each with its own agent.
      const threads = await all(client.beta.sessions.threads.list(session.id));
      expect(threads).toHaveLength(3);
      const [primary, ...children] = threads;
      expect(primary).toMatchObject({ parent_thread_id: null, status: "idle" });
      for (const child of children) {
        expect(child).toMatchObject({ parent_thread_id: primary?.id, status: "idle" });
      }
      const nameOf = (c: (typeof children)[number]) => (c.agent as { name?: string }).name;
      expect(children.map(nameOf).sort()).toEqual(["researcher", "writer"]);
      const researcherThread = children.find((c) => nameOf(c) === "researcher");
      expect(researcherThread?.agent).toMatchObject({
        id: researcher.id,
        version: 1,
        system: "You research.",
      });
      expect(new Set(created.map((e) => e.session_thread_id))).toEqual(new Set(children.map((c) => c.id)));

      // A child's own history: its task received, an ordinary turn, its answer sent to the parent.
      const childEvents = await all(
        client.beta.sessions.threads.events.list(researcherThread!.id, { session_id: session.id }),
      );
      const childTypes = childEvents.map((e) => e.type);
      expect(childTypes[0]).toBe("agent.thread_message_received");
      expect(childTypes).toContain("session.status_running");
      expect(childTypes).toContain("agent.message");
      expect(childTypes.at(-2)).toBe("session.status_idle");
      expect(childTypes.at(-1)).toBe("agent.thread_message_sent");

      // The committed history of the session's thread agrees with what the stream showed.
      const committed = (await history(client, session.id)).map((e) => e.type);
      expect(committed.slice(committed.length - turn.length)).toEqual(types);
      expect(isEndTurnIdle(turn.at(-1)!)).toBe(true);
    } finally {
      await stream.close();
    }
  });
});
