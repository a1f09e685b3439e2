import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/console/api/wire.js";
import { runTrace, spanBox } from "../../src/console/projection/runTrace.js";
import { ev } from "./events.js";
import { th } from "./multiagentEvents.js";

const secs = (events: SessionEvent[], a: number, b: number) =>
  Date.parse(events[b]!.processed_at!) - Date.parse(events[a]!.processed_at!);

describe("runTrace", () => {
  it("draws a run, its model requests, a tool call waiting on approval and the time to its first tool", () => {
    const running = ev.running();
    const start = ev.modelStart();
    const end = ev.modelEnd(start.id);
    const use = ev.toolUse("bash", { command: "ls" }, "ask");
    const confirm = ev.confirm(use.id, "allow");
    const result = ev.toolResult(use.id, "ok");
    const idle = ev.idle("end_turn");
    const events = [ev.user("go"), running, start, end, use, confirm, result, idle];
    const trace = runTrace(events, [], 0);
    const byKind = (kind: string) => trace.spans.filter((s) => s.kind === kind);
    expect(byKind("run")).toMatchObject([{ label: "run 1 · end_turn", run: 1, error: false }]);
    expect(byKind("run")[0]!.end! - byKind("run")[0]!.start).toBe(secs(events, 1, 7));
    expect(byKind("model")).toMatchObject([{ label: "claude-sonnet-4-6", error: false }]);
    expect(byKind("model")[0]!.end! - byKind("model")[0]!.start).toBe(secs(events, 2, 3));
    expect(byKind("tool")).toMatchObject([{ label: "bash" }]);
    expect(byKind("tool")[0]!.end! - byKind("tool")[0]!.start).toBe(secs(events, 4, 6));
    expect(byKind("approval")).toMatchObject([{ label: "approval: bash (allow)", error: false }]);
    expect(byKind("approval")[0]!.end! - byKind("approval")[0]!.start).toBe(secs(events, 4, 5));
    expect(byKind("first_tool")[0]!.end! - byKind("first_tool")[0]!.start).toBe(secs(events, 1, 4));
    expect(trace.start).toBe(Date.parse(running.processed_at!));
    expect(trace.end).toBe(Date.parse(idle.processed_at!));
    // The run comes first in its run's rows.
    expect(trace.spans[0]?.kind).toBe("run");
  });

  it("marks a failed run and an errored request, and keeps an open span open", () => {
    const start = ev.modelStart();
    const events = [
      ev.running(),
      start,
      ev.modelEnd(start.id, true),
      ev.error("bad"),
      ev.idle("retries_exhausted"),
    ];
    const next = ev.modelStart();
    const trace = runTrace([...events, ev.running(), next], [], Date.parse(next.processed_at!) + 5_000);
    const runs = trace.spans.filter((s) => s.kind === "run");
    expect(runs.map((r) => [r.label, r.error])).toEqual([
      ["run 1 · retries_exhausted", true],
      ["run 2", false],
    ]);
    expect(runs[1]?.end).toBeNull();
    expect(trace.spans.find((s) => s.kind === "model" && s.run === 1)?.error).toBe(true);
    expect(trace.spans.find((s) => s.kind === "model" && s.run === 2)?.end).toBeNull();
    expect(trace.end).toBe(Date.parse(next.processed_at!) + 5_000);
  });

  it("draws spawned threads until they idle, and resources realized from their run's start", () => {
    const running = ev.running();
    const created = th.created("sthr_2", "researcher");
    const idle = th.idle("sthr_2", "researcher");
    const events = [running, created, idle, ev.idle("end_turn")];
    // The multi-agent helpers keep their own clock: the realization is put inside the run by hand.
    const realized = new Date(Date.parse(running.processed_at!) + 500).toISOString();
    const trace = runTrace(events, [realized], 0);
    expect(trace.spans.find((s) => s.kind === "thread")).toMatchObject({
      label: "thread: researcher",
      run: 1,
    });
    const thread = trace.spans.find((s) => s.kind === "thread")!;
    expect(thread.end).toBe(Date.parse(idle.processed_at!));
    const resources = trace.spans.find((s) => s.kind === "realized")!;
    expect(resources).toMatchObject({
      run: 1,
      start: Date.parse(running.processed_at!),
      end: Date.parse(realized),
    });
  });

  it("places spans in percent of the trace, never past its edge", () => {
    const trace = { start: 0, end: 1_000, spans: [] };
    const at = (start: number, end: number | null) => ({
      id: "x",
      kind: "tool" as const,
      label: "",
      run: 1,
      start,
      end,
      error: false,
    });
    expect(spanBox(trace, at(250, 500), 0)).toEqual({ x: 25, width: 25 });
    expect(spanBox(trace, at(900, null), 2_000)).toEqual({ x: 90, width: 10 });
    expect(spanBox(trace, at(500, 500), 0).width).toBe(0.5);
  });

  it("is empty for a session that never ran", () => {
    expect(runTrace([ev.user("hi")], [], 7)).toEqual({ start: 7, end: 7, spans: [] });
  });
});
