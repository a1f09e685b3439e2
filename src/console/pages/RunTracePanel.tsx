import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import type { SessionEvent } from "../api/wire.js";
import { formatDuration } from "../projection/overview.js";
import { runTrace, spanBox } from "../projection/runTrace.js";

/** The most spans drawn: a long session shows its latest runs' (the transcript has the rest). */
const MAX_SPANS = 300;

/**
 * The session's runs as a waterfall from its committed events: one row per run, model request,
 * tool call, approval wait, spawned thread, and the time to each run's first tool, with durations.
 * Bars are SVG rectangles placed in percent, so the trace fits any width and needs no inline style.
 */
export function RunTracePanel({ sessionId, events }: { sessionId: string; events: readonly SessionEvent[] }) {
  const { client } = useApi();
  // The same read (and cache) as the runs' usage below: when each run realized its resources.
  const usage = useQuery({
    queryKey: ["session", sessionId, "resource-usage", undefined],
    queryFn: ({ signal }) => awaken.resourceUsage(client, sessionId, undefined, signal),
  });
  const realized = useMemo(() => usage.data?.data.map((run) => run.realized_at) ?? [], [usage.data]);
  // An open span is drawn to the time of the last change the page saw.
  const trace = useMemo(() => runTrace(events, realized, Date.now()), [events, realized]);
  if (trace.spans.length === 0) return null;
  const spans = trace.spans.slice(-MAX_SPANS);
  return (
    <section className="card" aria-labelledby="trace-title" data-testid="run-trace">
      <h2 id="trace-title">Run trace</h2>
      <p className="muted">
        {formatDuration(trace.end - trace.start)} from the first run's start
        {spans.length < trace.spans.length ? `; the latest ${spans.length} spans` : ""}
      </p>
      <ol className="waterfall">
        {spans.map((span) => {
          const box = spanBox(trace, span, trace.end);
          return (
            <li
              key={span.id}
              className={`span-row span-${span.kind}${span.error ? " span-error" : ""}`}
              data-testid="trace-span"
              data-kind={span.kind}
              data-error={span.error ? "true" : undefined}
            >
              <span className="span-label">{span.label}</span>
              <svg className="span-bar" aria-hidden="true" preserveAspectRatio="none">
                <rect x={`${box.x}%`} width={`${box.width}%`} y="2" height="12" rx="2" />
              </svg>
              <span className="span-time">
                {span.end === null ? "open" : formatDuration(span.end - span.start)}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
