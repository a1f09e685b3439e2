import type { ModelRequestFields, SessionEvent } from "../api/wire.js";

/**
 * A session's runs as a waterfall, from its committed events alone: each run (running → idle), its
 * model requests (span start → end), tool calls (use → result), approval waits (an `ask` → the
 * confirmation), the time to the run's first tool, resources realized (from the run's usage record)
 * and the threads it spawned (created → idle). Times are the events' `processed_at`; a span still
 * open is drawn to `now`.
 */
export type SpanKind = "run" | "model" | "tool" | "approval" | "first_tool" | "realized" | "thread";

export interface TraceSpan {
  id: string;
  kind: SpanKind;
  label: string;
  /** The run (1-based) the span belongs to; 0 before any run started. */
  run: number;
  start: number;
  /** Null: still open. */
  end: number | null;
  error: boolean;
}

export interface RunTrace {
  start: number;
  end: number;
  spans: TraceSpan[];
}

const TOOL_USES = new Set(["agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use"]);
/** A result's field naming the call it answers, by result type. */
const RESULT_OF: Record<string, string> = {
  "agent.tool_result": "tool_use_id",
  "user.tool_result": "tool_use_id",
  "agent.mcp_tool_result": "mcp_tool_use_id",
  "user.custom_tool_result": "custom_tool_use_id",
};

type Loose = SessionEvent & Record<string, unknown>;
const timeOf = (event: SessionEvent): number | null => {
  const at = event.processed_at ? Date.parse(event.processed_at) : Number.NaN;
  return Number.isNaN(at) ? null : at;
};
const text = (value: unknown): string => (typeof value === "string" ? value : "");

export function runTrace(
  events: readonly SessionEvent[],
  realizedAt: readonly string[] = [],
  now: number = Date.now(),
): RunTrace {
  const spans: TraceSpan[] = [];
  const open = new Map<string, TraceSpan>();
  let run = 0;
  let runSpan: TraceSpan | null = null;
  let toolSeen = false;
  const close = (key: string, end: number, error = false) => {
    const span = open.get(key);
    if (!span) return;
    span.end = end;
    span.error ||= error;
    open.delete(key);
  };
  const add = (key: string, span: TraceSpan, stillOpen: boolean) => {
    spans.push(span);
    if (stillOpen) open.set(key, span);
  };

  for (const raw of events) {
    const event = raw as Loose;
    const at = timeOf(event);
    if (at === null) continue;
    switch (event.type) {
      case "session.status_running":
        if (runSpan) break; // A rescheduled run goes on: still the same run.
        run += 1;
        toolSeen = false;
        runSpan = { id: event.id, kind: "run", label: `run ${run}`, run, start: at, end: null, error: false };
        spans.push(runSpan);
        break;
      case "session.status_idle":
        if (runSpan) {
          const stop = text((event.stop_reason as { type?: unknown } | null)?.type);
          runSpan.end = at;
          runSpan.label = `run ${run} · ${stop}`;
          runSpan.error = stop === "retries_exhausted";
          runSpan = null;
        }
        break;
      case "span.model_request_start": {
        const fields = event as ModelRequestFields;
        add(event.id, span(event.id, "model", fields.model ?? "model request", run, at), true);
        break;
      }
      case "span.model_request_end":
        close(text(event.model_request_start_id), at, event.is_error === true);
        break;
      case "user.tool_confirmation": {
        const callId = text(event.tool_use_id);
        const waiting = open.get(`ask:${callId}`);
        if (waiting) waiting.label += ` (${text(event.result)})`;
        close(`ask:${callId}`, at, event.result === "deny");
        break;
      }
      case "session.thread_created":
        add(
          `thread:${text(event.session_thread_id)}`,
          span(event.id, "thread", `thread: ${text(event.agent_name)}`, run, at),
          true,
        );
        break;
      case "session.thread_status_idle":
      case "session.thread_status_terminated":
        close(`thread:${text(event.session_thread_id)}`, at);
        break;
      default:
        if (TOOL_USES.has(event.type)) {
          const name = text(event.name);
          if (!toolSeen && runSpan) {
            toolSeen = true;
            spans.push({
              ...span(`${event.id}:first`, "first_tool", `to first tool (${name})`, run, runSpan.start),
              end: at,
            });
          }
          add(event.id, span(event.id, "tool", name, run, at), true);
          if (event.evaluated_permission === "ask")
            add(`ask:${event.id}`, span(`${event.id}:ask`, "approval", `approval: ${name}`, run, at), true);
        } else if (event.type in RESULT_OF) {
          close(text(event[RESULT_OF[event.type]!]), at, event.is_error === true);
        }
    }
  }

  // A realization belongs to the run it happened in: drawn from that run's start.
  for (const iso of realizedAt) {
    const at = Date.parse(iso);
    if (Number.isNaN(at)) continue;
    const owner = spans.find((s) => s.kind === "run" && s.start <= at && (s.end === null || at <= s.end));
    spans.push({
      ...span(`realized:${iso}`, "realized", "resources realized", owner?.run ?? 0, owner?.start ?? at),
      end: at,
    });
  }

  const ordered = spans.sort((a, b) => a.run - b.run || a.start - b.start || rank(a.kind) - rank(b.kind));
  const start = Math.min(...ordered.map((s) => s.start));
  const end = Math.max(...ordered.map((s) => s.end ?? now), start);
  return {
    start: Number.isFinite(start) ? start : now,
    end: Number.isFinite(end) ? end : now,
    spans: ordered,
  };
}

function span(id: string, kind: SpanKind, label: string, run: number, start: number): TraceSpan {
  return { id, kind, label, run, start, end: null, error: false };
}

/** Within a run and an instant, the run first, then what it waited on, then its steps. */
function rank(kind: SpanKind): number {
  return ["run", "realized", "first_tool", "model", "tool", "approval", "thread"].indexOf(kind);
}

/** A span's place on the waterfall, in percent of the trace's width (at least a sliver). */
export function spanBox(trace: RunTrace, span: TraceSpan, now: number): { x: number; width: number } {
  const total = Math.max(1, trace.end - trace.start);
  const x = ((span.start - trace.start) / total) * 100;
  const width = (((span.end ?? now) - span.start) / total) * 100;
  return { x: clamp(x), width: Math.max(0.5, Math.min(100 - clamp(x), width)) };
}

const clamp = (value: number) => Math.min(100, Math.max(0, value));
