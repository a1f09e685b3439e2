import type { AGUIEvent, RunAgentInput } from "@ag-ui/core";
import { EventType } from "@ag-ui/core";
import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/control/agentDefinition.js";
import type { DomainInput } from "../../src/coordinator/domainInputs.js";
import type { CommittedTypedFact } from "../../src/coordinator/factVocabulary.js";
import type { SessionRecord } from "../../src/coordinator/ports.js";
import type { AgUiPorts, TypedTailItem } from "../../src/edge/ag-ui/agUiPorts.js";
import { runAgUi } from "../../src/edge/ag-ui/agUiRun.js";
import { agentText, call, endTurn, running, user, waiting } from "./agUiFixtures.js";

const definition = (customTools: string[] = []) =>
  ({
    tools: customTools.map((name) => ({
      type: "custom",
      name,
      description: "",
      input_schema: { type: "object" },
    })),
  }) as unknown as AgentDefinition;

function sessionRecord(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: "sesn_1",
    threadId: "sthr_1",
    workspaceId: "ws",
    agent: { agentId: "agent_1", definition: definition(["get_weather"]) },
    status: "idle",
    pending: [],
    ...over,
  } as SessionRecord;
}

/** In-memory ports: a thread of typed facts, a scripted tail, and a record of every send. */
function fakePorts(options: {
  session?: SessionRecord | null;
  history?: CommittedTypedFact[];
  tail?: TypedTailItem[];
  holdTail?: boolean;
}) {
  const sent: DomainInput[][] = [];
  /** When the tail was opened (the real port subscribes on the call) and when input was sent. */
  const calls: Array<"tail" | "send"> = [];
  let opened = 0;
  /** The thread's version: history, then each send's echo, then the tail's facts (committed after). */
  let version = options.history?.at(-1)?.seq ?? 0;
  const history = [...(options.history ?? [])];
  let session = options.session ?? null;
  const ports: AgUiPorts = {
    agentDefinition: async () => definition(["get_weather"]),
    entry: {
      findNamed: async () => session,
      openNamed: async () => {
        opened += 1;
        session = sessionRecord();
        return session;
      },
    },
    send: async (_ws, _id, inputs) => {
      sent.push(inputs);
      calls.push("send");
      const last = Math.max(version, history.at(-1)?.seq ?? 0);
      version = last + inputs.length;
      return inputs.map((_, i) => ({ ...running(`echo_${i}`), seq: last + i + 1 }));
    },
    history: async (_t, afterSeq, upToSeq) =>
      history.filter((f) => f.seq > afterSeq && (upToSeq === undefined || f.seq <= upToSeq)),
    threadVersion: async () => history.at(-1)?.seq ?? 0,
    childAsks: async () => [],
    tail: (_s, _after, signal) => {
      calls.push("tail");
      return (async function* () {
        // As a real tail does: the turn's facts were committed after the input that started it.
        for (const item of options.tail ?? [])
          yield item.kind === "fact" ? { ...item, fact: { ...item.fact, seq: ++version } } : item;
        if (options.holdTail) {
          await new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => resolve(), { once: true }),
          );
        }
      })();
    },
    pingMs: 60_000,
  };
  return { ports, sent, calls, opened: () => opened };
}

function sink() {
  const events: AGUIEvent[] = [];
  const closed = new AbortController();
  return {
    events,
    closed,
    value: {
      write: async (e: readonly AGUIEvent[]) => {
        events.push(...e);
      },
      closed: closed.signal,
    },
  };
}

const input = (over: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: "thread-1",
  runId: "run-1",
  state: {},
  messages: [{ id: "u1", role: "user", content: "hi" }],
  tools: [],
  context: [],
  forwardedProps: {},
  ...over,
});

const request = (over: Partial<RunAgentInput> = {}) => ({
  workspaceId: "ws",
  agentId: "agent_1",
  input: input(over),
  logFailure: () => {},
});

const types = (events: AGUIEvent[]) => events.map((e) => e.type);

describe("one AG-UI run over the application ports", () => {
  it("a new thread: opens the session, enters the message, streams the turn, no snapshot", async () => {
    const f = fakePorts({
      tail: [
        { kind: "fact", fact: agentText("e_a", "hello") },
        { kind: "fact", fact: endTurn("e_i") },
      ],
    });
    const s = sink();
    await runAgUi(f.ports, request(), s.value);
    expect(f.opened()).toBe(1);
    expect(f.sent).toEqual([
      [{ kind: "message", content: [{ type: "text", text: "hi" }], clientMessageId: "u1" }],
    ]);
    expect(types(s.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
  });

  it("opens the tail before it writes the input: previews the turn streams at once are heard", async () => {
    const f = fakePorts({ tail: [{ kind: "fact", fact: endTurn("e_i") }] });
    await runAgUi(f.ports, request(), sink().value);
    expect(f.calls).toEqual(["tail", "send"]);
  });

  it("refused input after RUN_STARTED writes nothing and opens no session", async () => {
    for (const over of [
      { state: { x: 1 } },
      { forwardedProps: { y: 2 } },
      { tools: [{ name: "nope", description: "" }] },
    ]) {
      const f = fakePorts({});
      const s = sink();
      await runAgUi(f.ports, request(over), s.value);
      expect(types(s.events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
      expect(f.sent).toEqual([]);
      expect(f.opened()).toBe(0);
    }
  });

  it("a thread of another agent is a RUN_ERROR that names the agent", async () => {
    const f = fakePorts({
      session: sessionRecord({ agent: { agentId: "agent_other", definition: definition() } as never }),
    });
    const s = sink();
    await runAgUi(f.ports, request(), s.value);
    expect(s.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "thread_agent_mismatch" });
    expect((s.events.at(-1) as { message: string }).message).toContain("agent_other");
    expect(f.sent).toEqual([]);
  });

  it("an existing idle thread with nothing new: the snapshot, then the settled end at once", async () => {
    const history = [
      user("e_u1", "hi", "u1"),
      running("e_r"),
      call({ id: "c1", name: "get_weather", executor: "client" }),
      waiting("e_w", ["c1"]),
    ];
    const f = fakePorts({
      session: sessionRecord({ pending: [{ eventId: "c1", kind: "client_tool_result" }] }),
      history,
    });
    const s = sink();
    await runAgUi(f.ports, request(), s.value);
    expect(f.sent).toEqual([]);
    expect(types(s.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.MESSAGES_SNAPSHOT,
      EventType.RUN_FINISHED,
    ]);
    expect(s.events.at(-1)).toMatchObject({ outcome: { type: "success", pendingToolCallIds: ["c1"] } });
  });

  // Whether the interrupt still has something to stop is the ledger's decision, in its transaction
  // (test/coordinator/conditionalInterrupt.test.ts): the edge always asks for the conditional one.
  it("a client that goes away mid-turn asks to interrupt only a run still working", async () => {
    const f = fakePorts({
      tail: [{ kind: "fact", fact: agentText("e_a", "partial") }],
      holdTail: true,
    });
    const s = sink();
    const done = runAgUi(f.ports, request(), s.value);
    await new Promise((r) => setTimeout(r, 20));
    s.closed.abort();
    await done;
    expect(f.sent.at(-1)).toEqual([{ kind: "interrupt", onlyWhileWorking: true }]);
  });

  it("server failures show no detail on the wire", async () => {
    const f = fakePorts({});
    f.ports.entry.findNamed = async () => {
      throw new Error("secret database detail");
    };
    const s = sink();
    const logged: unknown[] = [];
    await runAgUi(f.ports, { ...request(), logFailure: (e) => logged.push(e) }, s.value);
    expect(s.events.at(-1)).toEqual({
      type: EventType.RUN_ERROR,
      code: "internal",
      message: expect.any(String),
    });
    expect(JSON.stringify(s.events)).not.toContain("secret");
    expect(logged).toHaveLength(1);
  });
});
