/**
 * Distributed traces, as a narrow port like `metrics.ts`: the edge, the coordinator, the worker and
 * the runtime start spans through it and never see the tracing library. Absent (tracing off), every
 * caller skips its span behind a null check, so nothing is allocated per turn.
 *
 * Attributes carry route patterns, model and tool names, token counts, outcomes and ids; never a
 * header, a body, a key or a secret. A prompt, an answer, a tool's input or output only when the
 * run captures content (`contentCapture.ts`: the operator's ceiling, the session's request and its
 * data subject's consent all allow it), as the GenAI content attributes, each capped at 16 KiB,
 * taken from committed facts and model output only (a secret placeholder stays a placeholder).
 */

export type TraceSpanKind = "server" | "client" | "internal" | "consumer";
export type TraceAttributes = Record<string, string | number | boolean | readonly string[]>;

export interface TraceSpan {
  setAttributes(attributes: TraceAttributes): void;
  /** Ends the span (once); `error`, a secret-free outcome or error type, marks it failed. */
  end(error?: string): void;
}

export interface Tracing {
  /**
   * Starts a span. `parent`: a stored trace context (`activeContext`'s form, or one the edge
   * validated), null for a new trace; absent, the active span (if any) is the parent.
   */
  startSpan(
    name: string,
    kind: TraceSpanKind,
    attributes?: TraceAttributes,
    parent?: string | null,
  ): TraceSpan;
  /** Runs `fn` with `span` active: spans started and lines logged inside it belong to it. */
  withSpan<T>(span: TraceSpan, fn: () => T): T;
  /** The active span's context, to store with the work it starts; null when no span is active. */
  activeContext(): string | null;
}
