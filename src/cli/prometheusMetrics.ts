import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Metrics, MetricsExposition, ModelTokens } from "../kernel/metrics.js";

/**
 * Label values a client can influence (a model id from an agent definition): the first few distinct
 * values are kept, later ones are counted as "other", so no client can grow the series without bound.
 */
class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly limit: number) {}

  value(raw: string): string {
    const clean = raw.slice(0, 64).replace(/[^A-Za-z0-9._:/@-]/g, "_");
    if (this.seen.has(clean)) return clean;
    if (this.seen.size >= this.limit) return "other";
    this.seen.add(clean);
    return clean;
  }
}

const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export interface PrometheusMetrics extends Metrics, MetricsExposition {}

/**
 * The server's metrics on a registry of its own (never prom-client's global one), so several
 * servers in one process each count only themselves. Process metrics join the same registry.
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const providers = new BoundedLabel(16);
  const models = new BoundedLabel(64);

  const http = new Counter({
    name: "awaken_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status.",
    labelNames: ["route", "method", "status"],
    registers,
  });
  const httpSeconds = new Histogram({
    name: "awaken_http_request_duration_seconds",
    help: "Time to answer an HTTP request (streams: until they close), by route pattern and method.",
    labelNames: ["route", "method"],
    registers,
  });
  const modelRequests = new Counter({
    name: "awaken_model_requests_total",
    help: "Model requests, by provider, model and outcome (ok, error, aborted).",
    labelNames: ["provider", "model", "outcome"],
    registers,
  });
  const modelSeconds = new Histogram({
    name: "awaken_model_request_duration_seconds",
    help: "Model request latency until the whole answer arrived, by provider and model.",
    labelNames: ["provider", "model"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers,
  });
  const tokens = new Counter({
    name: "awaken_model_tokens_total",
    help: "Tokens the providers reported, by provider, model and kind (input, output, cache_read, cache_creation).",
    labelNames: ["provider", "model", "kind"],
    registers,
  });
  const toolCalls = new Counter({
    name: "awaken_tool_calls_total",
    help: "Tool calls, by tool (built-in name, mcp or custom) and outcome.",
    labelNames: ["tool", "outcome"],
    registers,
  });
  const toolSeconds = new Histogram({
    name: "awaken_tool_call_duration_seconds",
    help: "Latency of tool calls the server ran (built-in and MCP), by tool.",
    labelNames: ["tool"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers,
  });
  const commits = new Counter({
    name: "awaken_commits_total",
    help: "Fenced commits by workers, by outcome (ok, lost_claim, version_conflict).",
    labelNames: ["outcome"],
    registers,
  });
  const settled = new Counter({
    name: "awaken_runs_settled_total",
    help: "Runs settled, by outcome (done, awaiting, failed).",
    labelNames: ["outcome"],
    registers,
  });
  const streams = new Gauge({
    name: "awaken_event_streams_open",
    help: "Session event streams open now, over every client protocol.",
    registers,
  });

  const tokenKinds = (t: ModelTokens) =>
    [
      ["input", t.input],
      ["output", t.output],
      ["cache_read", t.cacheRead],
      ["cache_creation", t.cacheCreation],
    ] as const;

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    httpRequest(route, method, status, seconds) {
      const m = HTTP_METHODS.has(method) ? method : "other";
      http.inc({ route, method: m, status: String(status) });
      httpSeconds.observe({ route, method: m }, seconds);
    },
    modelRequest(provider, model, outcome, seconds, used) {
      const labels = { provider: providers.value(provider), model: models.value(model) };
      modelRequests.inc({ ...labels, outcome });
      modelSeconds.observe(labels, seconds);
      for (const [kind, count] of used ? tokenKinds(used) : []) {
        if (count > 0) tokens.inc({ ...labels, kind }, count);
      }
    },
    toolCall(tool, outcome, seconds) {
      toolCalls.inc({ tool, outcome });
      if (seconds !== undefined) toolSeconds.observe({ tool }, seconds);
    },
    commit: (outcome) => commits.inc({ outcome }),
    runSettled: (outcome) => settled.inc({ outcome }),
    streamOpened() {
      streams.inc();
      let open = true;
      return () => {
        if (open) streams.dec();
        open = false;
      };
    },
  };
}
