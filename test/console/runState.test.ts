import { describe, expect, it } from "vitest";
import { describeRunState, pendingApprovals, runState } from "../../src/console/projection/runState.js";
import { ev } from "./events.js";

describe("the run state projection", () => {
  it("no events: no run", () => {
    expect(runState([])).toEqual({ phase: "none" });
  });

  it("a message not yet picked up is a queued run", () => {
    expect(runState([ev.user("hi")])).toEqual({ phase: "queued", run: 1 });
  });

  it("running, then ended with its outcome; the next message queues the next run", () => {
    const first = [ev.user("hi"), ev.running()];
    expect(runState(first)).toMatchObject({ phase: "running", run: 1 });
    const ended = [...first, ev.agent("hello"), ev.idle("end_turn")];
    expect(runState(ended)).toMatchObject({ phase: "ended", run: 1, outcome: "end_turn", error: null });
    expect(runState([...ended, ev.user("again")])).toEqual({ phase: "queued", run: 2 });
    expect(runState([...ended, ev.user("again"), ev.running()])).toMatchObject({ phase: "running", run: 2 });
  });

  it("an idle that waits is the same run awaiting, for what each call needs", () => {
    const ask = ev.toolUse("bash", { command: "ls" }, "ask");
    const custom = ev.customToolUse("get_weather");
    const events = [ev.user("hi"), ev.running(), ask, custom, ev.idle({ waitingFor: [ask.id, custom.id] })];
    const state = runState(events);
    expect(state).toMatchObject({
      phase: "awaiting",
      run: 1,
      calls: [
        { id: ask.id, needs: "approval", name: "bash", input: { command: "ls" } },
        { id: custom.id, needs: "custom_tool_result", name: "get_weather" },
      ],
    });
    expect(pendingApprovals(state).map((call) => call.id)).toEqual([ask.id]);
    expect(describeRunState(state)).toBe(
      "Run 1 awaiting approval of bash, the result of custom tool get_weather",
    );
  });

  it("a confirmation answers its call; the last answer resumes the same run", () => {
    const ask = ev.toolUse("bash", {}, "ask");
    const waiting = [ev.user("hi"), ev.running(), ask, ev.idle({ waitingFor: [ask.id] })];
    const answered = [...waiting, ev.confirm(ask.id, "allow")];
    expect(pendingApprovals(runState(answered))).toEqual([]);
    expect(runState(answered)).toMatchObject({ phase: "running", run: 1 });
    expect(runState([...answered, ev.running()])).toMatchObject({ phase: "running", run: 1 });
  });

  it("a failed run ends with its last error; a later run starts clean", () => {
    const failed = [ev.user("go"), ev.running(), ev.error("HTTP 400"), ev.idle("retries_exhausted")];
    const state = runState(failed);
    expect(state).toMatchObject({
      phase: "ended",
      outcome: "retries_exhausted",
      error: { type: "model_request_failed_error", message: "HTTP 400" },
    });
    expect(describeRunState(state)).toBe("Run 1 ended: retries_exhausted (model_request_failed_error)");
    const next = runState([...failed, ev.user("again"), ev.running(), ev.idle("end_turn")]);
    expect(next).toMatchObject({ phase: "ended", run: 2, error: null });
  });

  it("an interrupt ends the run with the idle that follows it", () => {
    const events = [ev.user("go"), ev.running(), ev.interrupt(), ev.idle("end_turn")];
    expect(runState(events)).toMatchObject({ phase: "ended", outcome: "end_turn" });
  });

  it("a terminated session is final", () => {
    expect(runState([ev.user("go"), ev.running(), ev.terminated()])).toEqual({ phase: "terminated", run: 1 });
  });
});
