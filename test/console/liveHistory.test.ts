import { describe, expect, it } from "vitest";
import { EMPTY_HISTORY, withCommitted, withStreamEvent } from "../../src/console/projection/liveHistory.js";
import { ev } from "./events.js";

describe("the live history", () => {
  it("committed events are kept once, whichever of history and stream brought them", () => {
    const a = ev.user("a");
    const b = ev.running();
    const listed = withCommitted(EMPTY_HISTORY, [a, b]);
    const streamed = withStreamEvent(withStreamEvent(listed, b), ev.agent("c"));
    expect(streamed.events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "agent.message",
    ]);
  });

  it("a preview grows with its deltas and gives way to the committed message with its id", () => {
    let history = withStreamEvent(EMPTY_HISTORY, {
      type: "event_start",
      event: { id: "sevt_m", type: "agent.message" },
    } as never);
    for (const text of ["Hel", "lo"]) {
      history = withStreamEvent(history, {
        type: "event_delta",
        event_id: "sevt_m",
        delta: { type: "content_delta", content: { type: "text", text } },
      } as never);
    }
    expect(history.previews).toEqual([{ id: "sevt_m", type: "agent.message", text: "Hello" }]);
    history = withStreamEvent(history, ev.agent("Hello", "sevt_m"));
    expect(history.previews).toEqual([]);
    expect(history.events).toHaveLength(1);
  });

  it("a failed model request drops the previews it left", () => {
    const start = ev.modelStart();
    let history = withStreamEvent(EMPTY_HISTORY, start);
    history = withStreamEvent(history, {
      type: "event_start",
      event: { id: "sevt_never", type: "agent.message" },
    } as never);
    history = withStreamEvent(history, ev.modelEnd(start.id, true));
    expect(history.previews).toEqual([]);
  });
});
