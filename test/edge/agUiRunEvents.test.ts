import { EventType } from "@ag-ui/core";
import { describe, expect, it } from "vitest";
import { interruptIdFor } from "../../src/edge/ag-ui/interruptIds.js";
import { projectMessages } from "../../src/edge/ag-ui/messageProjection.js";
import { RunEventFormatter } from "../../src/edge/ag-ui/runEventFormatter.js";
import {
  agentText,
  call,
  endTurn,
  fact,
  judge,
  requestStart,
  result,
  running,
  user,
  waiting,
} from "./agUiFixtures.js";

const types = (events: Array<{ type: string }>) => events.map((e) => e.type);

describe("AG-UI run events", () => {
  it("streams text from previews, closes it with the committed fact, and finishes on end_turn", async () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set(["u1"]));
    const events = [
      f.started(),
      ...f.fact(user("e_u1", "hi", "u1")).events,
      ...f.fact(running("e_r")).events,
      ...f.fact(requestStart("e_m")).events,
      ...f.preview({ kind: "preview_start", eventId: "e_a1", preview: "text" }),
      ...f.preview({ kind: "preview_delta", eventId: "e_a1", index: 0, text: "Hel" }),
      ...f.preview({ kind: "preview_delta", eventId: "e_a1", index: 0, text: "lo" }),
      ...f.fact(agentText("e_a1", "Hello")).events,
    ];
    const idle = f.fact(endTurn("e_i"));
    expect(idle.end).toEqual({ kind: "success", pendingToolCallIds: [] });
    events.push(...idle.events, ...f.finish(idle.end!));
    expect(types(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
    const { result: r } = await judge(events, [{ id: "u1", role: "user", content: "hi" }]);
    expect(r.newMessages).toEqual([{ id: "e_a1", role: "assistant", content: "Hello" }]);
  });

  it("a committed message with no preview streams whole; reasoning previews become REASONING_*", async () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set());
    const events = [
      f.started(),
      ...f.preview({ kind: "preview_start", eventId: "e_t", preview: "thinking" }),
      ...f.preview({ kind: "preview_delta", eventId: "e_t", index: 0, text: "hmm" }),
      ...f.fact(fact("e_t", { kind: "unknown", type: "agent.thinking", body: {} })).events,
      ...f.fact(agentText("e_a", "Whole")).events,
      ...f.finish({ kind: "success", pendingToolCallIds: [] }),
    ];
    expect(types(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.REASONING_START,
      EventType.REASONING_MESSAGE_START,
      EventType.REASONING_MESSAGE_CONTENT,
      EventType.REASONING_MESSAGE_END,
      EventType.REASONING_END,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
    const { agent } = await judge(events);
    expect(agent.messages).toEqual([
      { id: "e_t", role: "reasoning", content: "hmm" },
      { id: "e_a", role: "assistant", content: "Whole" },
    ]);
  });

  it("a server tool: call under its text, TOOL_CALL_RESULT, and the client's list equals the projection", async () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set(["u1"]));
    const history = [
      user("e_u1", "list files", "u1"),
      running("e_r"),
      requestStart("e_m1"),
      agentText("e_a1", "Calling bash."),
      call({
        id: "e_c1",
        name: "bash",
        input: { command: "ls" },
        permission: { decision: "allow", evaluation: null },
      }),
      result("e_res1", "e_c1", "a.txt"),
      requestStart("e_m2"),
      agentText("e_a2", "There is a.txt."),
      endTurn("e_i"),
    ];
    const events = [f.started()];
    events.push(...f.preview({ kind: "preview_start", eventId: "e_a1", preview: "text" }));
    events.push(...f.preview({ kind: "preview_delta", eventId: "e_a1", index: 0, text: "Calling bash." }));
    events.push(
      ...f.preview({ kind: "preview_start", eventId: "e_c1", preview: "tool_input", toolName: "bash" }),
    );
    events.push(...f.preview({ kind: "preview_delta", eventId: "e_c1", index: 1, text: '{"command":"ls"}' }));
    let end = null;
    for (const item of history) {
      const out = f.fact(item);
      events.push(...out.events);
      end = out.end ?? end;
    }
    events.push(...f.finish(end!));
    expect(types(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_END,
      EventType.TOOL_CALL_RESULT,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
    const { agent } = await judge(events, [{ id: "u1", role: "user", content: "list files" }]);
    expect(agent.messages).toEqual(projectMessages(history));
  });

  it("waiting on a client tool finishes with pendingToolCallIds; on an approval with an interrupt", async () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set());
    const events = [f.started()];
    events.push(...f.fact(call({ id: "c_client", name: "get_weather", executor: "client" })).events);
    events.push(
      ...f.fact(
        call({
          id: "c_ask",
          name: "bash",
          input: { command: "rm x" },
          permission: { decision: "ask", evaluation: null },
        }),
      ).events,
    );
    const clientOnly = f.fact(waiting("e_w1", ["c_client"])).end!;
    expect(clientOnly).toEqual({ kind: "success", pendingToolCallIds: ["c_client"] });
    const both = f.fact(waiting("e_w2", ["c_client", "c_ask"])).end!;
    expect(both).toMatchObject({
      kind: "interrupt",
      interrupts: [{ id: interruptIdFor("c_ask"), reason: "tool_approval", toolCallId: "c_ask" }],
    });
    const finished = f.finish(both);
    const { agent } = await judge([...events, ...finished]);
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interruptIdFor("c_ask")]);
  });

  it("an interrupt ends as cancelled; exhausted retries as RUN_ERROR with the last error; open previews are closed", async () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set());
    const events = [f.started()];
    events.push(...f.preview({ kind: "preview_start", eventId: "e_a", preview: "text" }));
    events.push(...f.preview({ kind: "preview_delta", eventId: "e_a", index: 0, text: "partial" }));
    f.fact(fact("e_int", { kind: "interrupt" }));
    const end = f.fact(endTurn("e_i")).end!;
    expect(end).toEqual({ kind: "cancelled" });
    events.push(...f.finish(end));
    expect(types(events).slice(-2)).toEqual([EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    await judge(events);

    const g = new RunEventFormatter("thread-1", "run-2", new Set());
    g.fact(running("e_r"));
    g.fact(
      fact("e_err", {
        kind: "error",
        errorType: "model_overloaded_error",
        message: "overloaded",
        retryStatus: "exhausted",
        extra: {},
      }),
    );
    const failed = g.fact(fact("e_i2", { kind: "status_idle", reason: { kind: "retries_exhausted" } })).end!;
    expect(failed).toEqual({ kind: "error", code: "model_overloaded_error", message: "overloaded" });
    expect(g.finish(failed)).toEqual([
      { type: EventType.RUN_ERROR, message: "overloaded", code: "model_overloaded_error" },
    ]);
  });

  it("a user message from another client streams as a user text message; the client's own does not", () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set(["mine"]));
    expect(f.fact(user("e1", "mine", "mine")).events).toEqual([]);
    expect(types(f.fact(user("e2", "theirs")).events)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
    ]);
  });

  it("the settled end of a thread parked on an approval reports the same interrupt again", () => {
    const f = new RunEventFormatter("thread-1", "run-1", new Set());
    f.seed(call({ id: "c1", name: "bash", permission: { decision: "ask", evaluation: null } }));
    f.seed(waiting("e_w", ["c1"]));
    expect(f.settledEnd()).toMatchObject({ kind: "interrupt", interrupts: [{ id: interruptIdFor("c1") }] });
  });
});

describe("AG-UI message projection", () => {
  it("rebuilds user, assistant (with calls) and tool messages; client ids where the client gave them", () => {
    const messages = projectMessages(
      [
        user("e_u1", "hi", "u1"),
        call({ id: "c1", name: "get_weather", input: { city: "Paris" }, executor: "client" }),
        result("e_r1", "c1", "sunny", "client"),
        agentText("e_a", "Sunny."),
        user("e_u2", "from elsewhere"),
      ],
      new Map([["c1", "t1"]]),
    );
    expect(messages).toEqual([
      { id: "u1", role: "user", content: "hi" },
      {
        id: "c1",
        role: "assistant",
        toolCalls: [
          { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      { id: "t1", role: "tool", toolCallId: "c1", content: "sunny" },
      { id: "e_a", role: "assistant", content: "Sunny." },
      { id: "e_u2", role: "user", content: "from elsewhere" },
    ]);
  });
});
