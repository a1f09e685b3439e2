import type { Message, RunAgentInput } from "@ag-ui/core";
import { describe, expect, it } from "vitest";
import { mapRunInput, type ThreadInputContext } from "../../src/edge/ag-ui/inputMapping.js";
import { interruptIdFor } from "../../src/edge/ag-ui/interruptIds.js";
import { RunRefusal } from "../../src/edge/ag-ui/runRefusal.js";

const thread = (over: Partial<ThreadInputContext> = {}): ThreadInputContext => ({
  committedUserMessageIds: new Set(),
  pending: [],
  customToolNames: new Set(),
  confirmedCallIds: new Set(),
  ...over,
});

const run = (over: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: "t",
  runId: "r",
  state: {},
  messages: [],
  tools: [],
  context: [],
  forwardedProps: {},
  ...over,
});

function refusal(call: () => unknown): RunRefusal {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(RunRefusal);
    return error as RunRefusal;
  }
  throw new Error("expected a refusal");
}

describe("AG-UI input mapping", () => {
  it("enters the last user message once: a committed client id is never entered again", () => {
    const messages: Message[] = [
      { id: "u1", role: "user", content: "first" },
      { id: "a1", role: "assistant", content: "reply" },
      { id: "u2", role: "user", content: [{ type: "text", text: "second" }] },
    ];
    expect(mapRunInput(run({ messages }), thread({ committedUserMessageIds: new Set(["u1"]) }))).toEqual([
      { kind: "message", content: [{ type: "text", text: "second" }], clientMessageId: "u2" },
    ]);
    expect(
      mapRunInput(run({ messages }), thread({ committedUserMessageIds: new Set(["u1", "u2"]) })),
    ).toEqual([]);
  });

  it("answers pending client calls from tool messages, once per call, and ignores answered ones", () => {
    const messages: Message[] = [
      { id: "u1", role: "user", content: "go" },
      {
        id: "a1",
        role: "assistant",
        toolCalls: [{ id: "call_1", type: "function", function: { name: "w", arguments: "{}" } }],
      },
      { id: "t0", role: "tool", toolCallId: "call_0", content: "old" },
      { id: "t1", role: "tool", toolCallId: "call_1", content: "sunny" },
      { id: "t1b", role: "tool", toolCallId: "call_1", content: "again" },
    ];
    const inputs = mapRunInput(
      run({ messages }),
      thread({
        committedUserMessageIds: new Set(["u1"]),
        pending: [{ eventId: "call_1", kind: "client_tool_result" }],
      }),
    );
    expect(inputs).toEqual([
      { kind: "tool_result", callId: "call_1", content: [{ type: "text", text: "sunny" }], isError: false },
    ]);
  });

  it("maps resume entries to confirmations: resolved allows unless approved is false; cancelled denies", () => {
    const pending = [
      { eventId: "c1", kind: "confirmation" as const },
      { eventId: "c2", kind: "confirmation" as const },
      { eventId: "c3", kind: "confirmation" as const },
    ];
    const inputs = mapRunInput(
      run({
        resume: [
          { interruptId: interruptIdFor("c1"), status: "resolved", payload: { approved: true } },
          {
            interruptId: interruptIdFor("c2"),
            status: "resolved",
            payload: { approved: false, reason: "not now" },
          },
          { interruptId: interruptIdFor("c3"), status: "cancelled" },
        ],
      }),
      thread({ pending }),
    );
    expect(inputs).toEqual([
      { kind: "tool_confirmation", callId: "c1", allowed: true, denyMessage: null },
      { kind: "tool_confirmation", callId: "c2", allowed: false, denyMessage: "not now" },
      { kind: "tool_confirmation", callId: "c3", allowed: false, denyMessage: null },
    ]);
  });

  it("enters nothing for an interrupt whose call is already confirmed (here or over another protocol)", () => {
    const answered = thread({ confirmedCallIds: new Set(["c1"]) });
    expect(
      mapRunInput(run({ resume: [{ interruptId: interruptIdFor("c1"), status: "resolved" }] }), answered),
    ).toEqual([]);
  });

  it("refuses an interrupt that is not pending, or one answered twice", () => {
    const pending = [{ eventId: "c1", kind: "confirmation" as const }];
    expect(
      refusal(() =>
        mapRunInput(
          run({ resume: [{ interruptId: interruptIdFor("c9"), status: "resolved" }] }),
          thread({ pending }),
        ),
      ).code,
    ).toBe("interrupt_not_pending");
    expect(
      refusal(() =>
        mapRunInput(run({ resume: [{ interruptId: "c1", status: "resolved" }] }), thread({ pending })),
      ).code,
    ).toBe("interrupt_not_pending");
    const twice = { interruptId: interruptIdFor("c1"), status: "resolved" as const };
    expect(refusal(() => mapRunInput(run({ resume: [twice, twice] }), thread({ pending }))).code).toBe(
      "interrupt_answered_twice",
    );
  });

  it("refuses state, forwardedProps, context, unknown tools and non-text content", () => {
    const t = thread({ customToolNames: new Set(["get_weather"]) });
    expect(refusal(() => mapRunInput(run({ state: { a: 1 } }), t)).code).toBe("state_unsupported");
    expect(refusal(() => mapRunInput(run({ forwardedProps: { x: true } }), t)).code).toBe(
      "forwarded_props_unsupported",
    );
    expect(refusal(() => mapRunInput(run({ context: [{ description: "d", value: "v" }] }), t)).code).toBe(
      "context_unsupported",
    );
    const tool = (name: string) => ({ name, description: "", parameters: {} });
    expect(mapRunInput(run({ tools: [tool("get_weather")] }), t)).toEqual([]);
    const unknown = refusal(() => mapRunInput(run({ tools: [tool("get_weather"), tool("rm_rf")] }), t));
    expect(unknown.code).toBe("tool_not_defined");
    expect(unknown.message).toContain('"rm_rf"');
    expect(unknown.message).toContain('"get_weather"');
    const image: Message = {
      id: "u1",
      role: "user",
      content: [{ type: "image", source: { type: "url", value: "https://example.com/a.png" } }],
    };
    expect(refusal(() => mapRunInput(run({ messages: [image] }), t)).code).toBe("content_unsupported");
  });

  it("takes empty state and props in every spelling", () => {
    for (const empty of [undefined, null, {}, []]) {
      expect(mapRunInput(run({ state: empty, forwardedProps: empty }), thread())).toEqual([]);
    }
  });
});
