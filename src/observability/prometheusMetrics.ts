import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Metrics, MetricsExposition, ModelTokens } from "../kernel/metrics.js";
import { modelMetricLabels } from "../runtime/metricLabels.js";

const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Samples a scrape-time gauge reads: one value per label set (an empty set for a plain gauge). */
export type ScrapedSamples = Array<{ labels?: Record<string, string>; value: number }>;

export interface ScrapedGauge {
  name: string;
  /** What it measures and its unit. */
  help: string;
  labelNames?: string[];
  /** Read at every scrape; a read that fails leaves the gauge without a value (NaN) for that scrape. */
  read(): ScrapedSamples | Promise<ScrapedSamples>;
}

export interface PrometheusMetrics extends Metrics, MetricsExposition {
  /**
   * A gauge whose value is read when scraped (queue depth from the database, pool use): the
   * honest figure across replicas, at no cost between scrapes.
   */
  gaugeAtScrape(gauge: ScrapedGauge): void;
}

/** Bounded tier and holder names: anything else (never expected) is counted as "other". */
const SANDBOX_TIERS = new Set(["bwrap", "none"]);
const CREDENTIAL_HOLDERS = new Set([
  "mcp_connection",
  "a2a_delegate",
  "egress_proxy",
  "mcp_process",
  "acp_harness",
  "validation_probe",
]);
const known = (values: Set<string>, value: string) => (values.has(value) ? value : "other");

/** Under Prometheus's default scrape timeout (10 s): a stuck database read fails one gauge, not the scrape. */
const SCRAPE_READ_TIMEOUT_MS = 3_000;

async function withinScrapeTime(read: ScrapedGauge["read"]): Promise<ScrapedSamples> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("scrape-time read timed out")), SCRAPE_READ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(read), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The server's metrics on a registry of its own (never prom-client's global one), so several
 * servers in one process each count only themselves. Process metrics join the same registry.
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

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
    help: "Model requests, by provider, model (a published model id, else other) and outcome (ok, error, aborted).",
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
  const rejections = new Counter({
    name: "awaken_fence_rejections_total",
    help: "Commits the fence refused, by reason (stale_claim: the claim was lost or lapsed; version_conflict: the thread moved; operation_conflict: an operation id reused with other content).",
    labelNames: ["reason"],
    registers,
  });
  const claims = new Counter({
    name: "awaken_run_claims_total",
    help: "Runs claimed by workers, by transport (local, remote) and kind (queued; reclaimed: a lapsed lease taken over).",
    labelNames: ["via", "kind"],
    registers,
  });
  const claimWait = new Histogram({
    name: "awaken_run_claim_wait_seconds",
    help: "Seconds a run was claimable before a worker claimed it (since it was queued, or since its lapsed lease expired), by transport and kind.",
    labelNames: ["via", "kind"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers,
  });
  const crashBudget = new Counter({
    name: "awaken_crash_budget_exhausted_total",
    help: "Runs failed because their workers crashed (leases lapsed without progress) more often than the crash budget allows.",
    registers,
  });
  const sandboxes = new Counter({
    name: "awaken_sandbox_realizations_total",
    help: "Sessions' first sandbox realizations, by tier and outcome (ok; error: the sandbox could not be started, each attempt counted).",
    labelNames: ["tier", "outcome"],
    registers,
  });
  const firstTool = new Histogram({
    name: "awaken_sandbox_first_tool_seconds",
    help: "Seconds from asking for a session's sandbox the first time until its first tool could run (realization, including package preparation), by tier.",
    labelNames: ["tier"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers,
  });
  const credentialOpens = new Counter({
    name: "awaken_credential_opens_total",
    help: "Audited credential opens, by holder kind (mcp_connection, a2a_delegate, egress_proxy, mcp_process, acp_harness, validation_probe) and outcome (opened, refreshed, refused).",
    labelNames: ["holder", "outcome"],
    registers,
  });
  const pushDeliveries = new Counter({
    name: "awaken_push_deliveries_total",
    help: "Push-notification delivery attempts, by outcome (delivered; retried: failed, tried again later; abandoned: out of attempts; refused: the address policy refused the webhook).",
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
      const labels = modelMetricLabels(provider, model);
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
    fenceRejected: (reason) => rejections.inc({ reason }),
    runClaimed(via, reclaimed, waitSeconds) {
      const labels = { via, kind: reclaimed ? "reclaimed" : "queued" };
      claims.inc(labels);
      if (waitSeconds !== undefined) claimWait.observe(labels, Math.max(0, waitSeconds));
    },
    crashBudgetExhausted: () => crashBudget.inc(),
    sandboxRealized(tier, outcome, seconds) {
      const t = known(SANDBOX_TIERS, tier);
      sandboxes.inc({ tier: t, outcome });
      if (seconds !== undefined) firstTool.observe({ tier: t }, seconds);
    },
    credentialOpen: (holder, outcome) =>
      credentialOpens.inc({ holder: known(CREDENTIAL_HOLDERS, holder), outcome }),
    pushDelivery: (outcome) => pushDeliveries.inc({ outcome }),
    gaugeAtScrape({ name, help, labelNames = [], read }) {
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          let samples: ScrapedSamples;
          try {
            samples = await withinScrapeTime(read);
          } catch {
            // An unreachable database must not fail the whole scrape: a labelled gauge has no
            // sample this time, an unlabelled one (which always has one) reads NaN, never a made-up 0.
            if (labelNames.length === 0) this.set(Number.NaN);
            return;
          }
          for (const { labels, value } of samples) this.set(labels ?? {}, value);
        },
      });
    },
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
