/**
 * Workflow runs over the SDK: an agent writes a plan of two phases (the first with a predefined and
 * an inline agent in parallel, the second with one predefined agent); each step runs as a thread of
 * the session, claimed and fenced like any run; the second phase's step gets the first phase's
 * results; the run's `workflow_run.*` events, its threads and the call's result tell it all, on
 * SQLite and PostgreSQL. A plan the server cannot run is refused with the SDK's error event.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type {
  BetaManagedAgentsWorkflowRunCreatedEvent,
  BetaManagedAgentsWorkflowRunErrorEvent,
  BetaManagedAgentsWorkflowRunStatusEndedEvent,
} from "@anthropic-ai/sdk/resources/beta/sessions/events";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  history,
  isEndTurnIdle,
  MODEL,
  runTurn,
  StreamReader,
  textOf,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;

/** A thread's agent's name (an advisor thread's has none). */
const nameOf = (thread: { agent: object }): string | undefined =>
  "name" in thread.agent ? String(thread.agent.name) : undefined;

const PLAN = {
  name: "report",
  description: "Research, then write.",
  phases: [
    {
      name: "research",
      steps: [
        { agent_name: "researcher", message: "find A" },
        { agent: { name: "critic", system: "You critique." }, message: "doubt B" },
      ],
    },
    { name: "write", description: "One draft.", steps: [{ agent_name: "writer", message: "draft C" }] },
  ],
};

describe.each(BACKENDS)("workflow runs over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  let leadId: string;
  let environmentId: string;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer(schema ? { databaseUrl: schema.url } : {});
    client = t.client;
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
        subagents: { type: "disabled" },
        workflows: { type: "enabled", predefined_agents: [researcher.id, writer.id] },
      },
    });
    leadId = lead.id;
    // An agent that delegates needs its sandbox before the first tool call (sandbox admission).
    const environment = await client.beta.environments.create({
      name: "workflows",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    environmentId = environment.id;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  async function turn(text: string): Promise<{ sessionId: string; events: WireEvent[] }> {
    const session = await client.beta.sessions.create({ agent: leadId, environment_id: environmentId });
    const stream = await StreamReader.open(client, session.id);
    try {
      return { sessionId: session.id, events: await runTurn(client, stream, session.id, text) };
    } finally {
      await stream.close();
    }
  }

  it("a plan of two phases runs its steps as threads, phase after phase, and answers with every result", async () => {
    const { sessionId, events } = await turn(`call start_workflow ${JSON.stringify(PLAN)}`);
    const runEvents = events.filter((e) => e.type.startsWith("workflow_run."));
    expect(runEvents.map((e) => e.type)).toEqual([
      "workflow_run.created",
      "workflow_run.status_running",
      "workflow_run.phase_started",
      "workflow_run.phase_ended",
      "workflow_run.phase_started",
      "workflow_run.phase_ended",
      "workflow_run.status_ended",
    ]);
    const created = runEvents[0] as unknown as BetaManagedAgentsWorkflowRunCreatedEvent;
    expect(created).toMatchObject({ name: "report", description: "Research, then write." });
    expect(created.phases.map((p) => [p.name, p.description])).toEqual([
      ["research", null],
      ["write", "One draft."],
    ]);
    const runId = created.workflow_run_id;
    expect(new Set(runEvents.map((e) => e.workflow_run_id))).toEqual(new Set([runId]));
    // Each phase ends what it started, in plan order.
    const [start1, end1, start2, end2] = runEvents.slice(2, 6);
    expect([start1?.workflow_run_phase_id, start2?.workflow_run_phase_id]).toEqual(
      created.phases.map((p) => p.id),
    );
    expect(end1).toMatchObject({
      phase_started_id: start1?.id,
      workflow_run_phase_id: start1?.workflow_run_phase_id,
    });
    expect(end2).toMatchObject({
      phase_started_id: start2?.id,
      workflow_run_phase_id: start2?.workflow_run_phase_id,
    });
    const ended = runEvents.at(-1) as unknown as BetaManagedAgentsWorkflowRunStatusEndedEvent;
    expect(ended.result).toEqual({ type: "completed" });

    // Three step threads, created by the run: two in the first phase, one after both answered.
    const threadEvents = events.filter((e) => e.type === "session.thread_created");
    expect(threadEvents.map((e) => [e.agent_name, e.workflow_run_id])).toEqual([
      ["researcher", runId],
      ["critic", runId],
      ["writer", runId],
    ]);
    const index = (id: string) => events.findIndex((e) => e.id === id);
    const writerCreated = threadEvents[2] as WireEvent;
    expect(index(writerCreated.id)).toBeGreaterThan(index(end1?.id ?? ""));
    for (const first of threadEvents.slice(0, 2)) {
      const answered = events.findIndex(
        (e) =>
          e.type === "agent.thread_message_received" && e.from_session_thread_id === first.session_thread_id,
      );
      expect(answered).toBeGreaterThan(-1);
      expect(answered).toBeLessThan(index(end1?.id ?? ""));
    }

    // The call's result has every step's answer by phase; the agent answers from it.
    const result = events.find((e) => e.type === "agent.tool_result");
    const resultText = JSON.stringify(result?.content);
    expect(result?.is_error).toBe(false);
    for (const said of ["find A", "doubt B", "draft C"]) expect(resultText).toContain(`You said: ${said}`);
    expect(textOf(events.findLast((e) => e.type === "agent.message"))).toContain(
      "Workflow report completed.",
    );
    expect(isEndTurnIdle(events.at(-1)!)).toBe(true);

    // The threads: the primary and three steps, each naming the run; the inline agent has no id.
    const threads = await all(client.beta.sessions.threads.list(sessionId));
    expect(threads).toHaveLength(4);
    const [primary, ...steps] = threads;
    expect(primary?.workflow_run_id).toBeNull();
    for (const step of steps) expect(step).toMatchObject({ workflow_run_id: runId, status: "idle" });
    const critic = steps.find((s) => nameOf(s) === "critic");
    expect(critic?.agent).toMatchObject({
      type: "inline",
      name: "critic",
      system: "You critique.",
      model: { id: MODEL },
    });
    expect(critic?.agent).not.toHaveProperty("id");
    expect(steps.find((s) => nameOf(s) === "researcher")?.agent).toMatchObject({
      type: "agent",
      version: 1,
    });

    // The second phase's step was given the first phase's results with its task.
    const writer = steps.find((s) => nameOf(s) === "writer");
    const writerHistory = await all(
      client.beta.sessions.threads.events.list(writer!.id, { session_id: sessionId }),
    );
    const task = textOf(writerHistory[0] as WireEvent);
    expect(task).toContain("draft C");
    expect(task).toContain("Results of the previous phase (research)");
    expect(task).toContain("[researcher] [offline model] You said: find A");
    expect(task).toContain("[critic] [offline model] You said: doubt B");
  });

  it("a plan naming an agent it may not run is refused: an error event with no run, an error result, no thread", async () => {
    const plan = { phases: [{ name: "one", steps: [{ agent_name: "root-shell", message: "rm" }] }] };
    const { sessionId, events } = await turn(`call start_workflow ${JSON.stringify(plan)}`);
    const error = events.find((e) => e.type === "workflow_run.error") as unknown as
      | BetaManagedAgentsWorkflowRunErrorEvent
      | undefined;
    expect(error).toMatchObject({ workflow_run_id: null, error: { type: "program_error" } });
    // The event's message is the server's own words, never the plan's content.
    expect(error?.error.message).not.toContain("root-shell");
    expect(events.some((e) => e.type === "workflow_run.created")).toBe(false);
    const result = events.find((e) => e.type === "agent.tool_result");
    expect(result?.is_error).toBe(true);
    expect(JSON.stringify(result?.content)).toContain('no predefined agent is named \\"root-shell\\"');
    expect(await all(client.beta.sessions.threads.list(sessionId))).toHaveLength(1);
  });

  it("a later phase naming an agent it may not run ends the run with the error, after the first phase ran", async () => {
    const plan = {
      phases: [
        { name: "one", steps: [{ agent_name: "writer", message: "first" }] },
        { name: "two", steps: [{ agent_name: "ghost", message: "second" }] },
      ],
    };
    const { events } = await turn(`call start_workflow ${JSON.stringify(plan)}`);
    const runEvents = events.filter((e) => e.type.startsWith("workflow_run."));
    expect(runEvents.map((e) => e.type)).toEqual([
      "workflow_run.created",
      "workflow_run.status_running",
      "workflow_run.phase_started",
      "workflow_run.error",
      "workflow_run.phase_ended",
      "workflow_run.status_ended",
    ]);
    const runId = runEvents[0]?.workflow_run_id;
    expect(runEvents[3]).toMatchObject({ workflow_run_id: runId, error: { type: "program_error" } });
    expect(runEvents.at(-1)).toMatchObject({ result: { type: "error", error: { type: "program_error" } } });
    expect(events.filter((e) => e.type === "session.thread_created")).toHaveLength(1);
    const result = events.find((e) => e.type === "agent.tool_result");
    expect(result?.is_error).toBe(true);
    expect(textOf(result)).toContain("phases[1].steps[0]");
    expect(isEndTurnIdle(events.at(-1)!)).toBe(true);
  });

  it("interrupting the session while a step waits for an approval ends the run as stopped, its phase closed", async () => {
    const asker = await client.beta.agents.create({
      name: "asker",
      model: MODEL,
      tools: [
        {
          type: "agent_toolset_20260401",
          configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
        },
      ] as never,
    });
    const planner = await client.beta.agents.create({
      name: "planner",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        workflows: { type: "enabled", predefined_agents: [asker.id] },
      },
    });
    const session = await client.beta.sessions.create({ agent: planner.id, environment_id: environmentId });
    const stream = await StreamReader.open(client, session.id);
    try {
      const plan = {
        name: "asks",
        phases: [{ name: "only", steps: [{ agent_name: "asker", message: "call bash" }] }],
      };
      await client.beta.sessions.events.send(session.id, {
        events: [
          {
            type: "user.message",
            content: [{ type: "text", text: `call start_workflow ${JSON.stringify(plan)}` }],
          },
        ],
      });
      // The step's ask, cross-posted on the primary stream: the run waits on it.
      await stream.until((e) => e.type === "agent.tool_use" && e.session_thread_id !== undefined, {
        timeoutMs: 20_000,
      });
      const from = stream.events.length;
      await client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
      const idle = await stream.until((e) => e.type === "session.status_idle", { from });
      expect(isEndTurnIdle(idle)).toBe(true);
      const runEvents = stream.events.filter((e) => e.type.startsWith("workflow_run."));
      expect(runEvents.map((e) => e.type)).toEqual([
        "workflow_run.created",
        "workflow_run.status_running",
        "workflow_run.phase_started",
        "workflow_run.phase_ended",
        "workflow_run.status_ended",
      ]);
      expect(runEvents.at(-1)).toMatchObject({ result: { type: "stopped" } });
      expect(runEvents[3]).toMatchObject({ phase_started_id: runEvents[2]?.id });
      // The interrupt ends it once: a second interrupt adds no workflow event.
      await client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
      const committed = (await history(client, session.id)).filter((e) => e.type.startsWith("workflow_run."));
      expect(committed).toHaveLength(5);
    } finally {
      await stream.close();
    }
  });

  it("a plan past the thread limit is refused with thread_limit_error", async () => {
    const step = { agent_name: "writer", message: "x" };
    const phase = (name: string) => ({ name, steps: Array.from({ length: 6 }, () => step) });
    const plan = { phases: [phase("a"), phase("b"), phase("c")] };
    const { events } = await turn(`call start_workflow ${JSON.stringify(plan)}`);
    expect(events.find((e) => e.type === "workflow_run.error")).toMatchObject({
      workflow_run_id: null,
      error: { type: "thread_limit_error" },
    });
  });
});
