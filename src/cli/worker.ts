import { hostname } from "node:os";
import { resolve } from "node:path";
import type { Logger } from "pino";
import { acpRuntimeCatalog } from "../brains/catalog.js";
import type { AcpRuntimeCatalog } from "../brains/ports.js";
import {
  type MetricsListen,
  startWorkerMetricsServer,
  type WorkerMetricsServer,
} from "../edge/workerMetricsServer.js";
import { sleep, systemClock } from "../kernel/clock.js";
import { traceContentCeiling } from "../kernel/contentCapture.js";
import { startOpenTelemetry } from "../observability/openTelemetry.js";
import { createPrometheusMetrics } from "../observability/prometheusMetrics.js";
import { createProviderRouter } from "../providers/router.js";
import { acpRuntimePorts } from "../runtime/acp/acpBrainStep.js";
import { outcomeHeartbeatFromEnv } from "../runtime/outcomeStep.js";
import { DEFAULT_RETRY_POLICY } from "../runtime/retryPolicy.js";
import { type ContainerStorage, containerStorageFrom } from "../sandbox/containerStorage.js";
import type { EgressProxyOptions } from "../sandbox/egressProxy.js";
import { createSandboxes, reportContainerTier, reportMissingBubblewrap } from "../sandbox/sandboxes.js";
import { CoordinatorRejected, HttpWorkerTransport } from "../worker/httpTransport.js";
import { PresenceStream } from "../worker/presenceStream.js";
import { RemoteCredentialHolder } from "../worker/remoteCredentials.js";
import { RemotePackageResolutions } from "../worker/remotePackageResolutions.js";
import { RemoteResources } from "../worker/remoteResources.js";
import { RemoteTunnelRelay } from "../worker/remoteTunnels.js";
import { MIN_WORKER_TOKEN_LENGTH, WORKER_TOKEN_ENV } from "../worker/transportWire.js";
import { Worker } from "../worker/workerLoop.js";
import { DEFAULT_DRAIN_MS } from "../worker/workerOptions.js";
import { metricsTokenFrom } from "./metricsToken.js";
import { AllowListError, outboundFor } from "./outbound.js";
import { assertCanListen } from "./portProbe.js";

export interface RemoteWorkerOptions {
  coordinatorUrl: string | undefined;
  /** Only here to be refused: a worker never touches an authoritative database. */
  databaseUrl: string | undefined;
  concurrency: number;
  /** On SIGTERM, how long in-flight runs may finish before their claims are handed back. */
  drainMs?: number | undefined;
  id: string | undefined;
  modelIdleTimeoutMs: number;
  modelRetryBaseMs: number;
  /** Sessions' sandbox workspaces on this worker's host. */
  workspaceDir: string;
  /**
   * `--container-storage`: this host's own podman image store for the container tier (else
   * AWAKEN_CONTAINER_STORAGE, else podman's default). Checked and created at start-up.
   */
  containerStorage?: string | undefined;
  /** The operator enabled tiers weaker than the default on this worker (`--allow-unsandboxed-tier`). */
  allowWeakerTiers?: boolean | undefined;
  env: NodeJS.ProcessEnv;
  /** `--allow-private-mcp-host`: private hosts MCP connections may reach (else AWAKEN_ALLOW_PRIVATE_HOSTS, else none). */
  allowPrivateHosts?: string | undefined;
  /**
   * The ACP runtimes this worker launches for `acp:<runtime>` models (shipped plus
   * `--acp-runtimes`, the same file as Control's). Absent: the shipped ones alone.
   */
  acpRuntimes?: AcpRuntimeCatalog | undefined;
  /**
   * The bwrap egress proxies' resolver, address policy and upstream CAs. Tests only, like
   * `UpOptions.sandboxEgress` (a local upstream on the loopback): no flag or variable of
   * `awaken worker` sets it; only a test's own entry point does (`WorkerCommandTestHooks`).
   */
  sandboxEgress?: EgressProxyOptions | undefined;
  /** `--metrics-port` (and `--metrics-host`): serve this process's own `GET /metrics`; absent, none. */
  metrics?: MetricsListen | undefined;
}

/** Forbidden or missing configuration: `awaken worker` prints the reason and exits non-zero. */
export class WorkerConfigError extends Error {}

/** Forbidden configuration is an error at start-up, not a warning. */
export function checkWorkerConfig(options: RemoteWorkerOptions): {
  url: string;
  token: string;
  traceContent: boolean;
} {
  const dbUrl = options.databaseUrl ?? options.env.AWAKEN_DATABASE_URL ?? options.env.DATABASE_URL;
  if (dbUrl) {
    const source = options.databaseUrl
      ? "--database-url"
      : options.env.AWAKEN_DATABASE_URL
        ? "AWAKEN_DATABASE_URL"
        : "DATABASE_URL";
    throw new WorkerConfigError(
      `a worker never opens the database, but ${source} is set: remove it. A worker reaches the ` +
        "coordinator only over HTTP (--coordinator-url); only `awaken up`, `awaken control` and `awaken coordinator` take a database URL.",
    );
  }
  if (options.env.AWAKEN_CONTROL_TOKEN) {
    throw new WorkerConfigError(
      "a worker never talks to Control, but AWAKEN_CONTROL_TOKEN is set: remove it. It is the private " +
        "Control↔Coordinator token; a worker holds only AWAKEN_WORKER_TOKEN.",
    );
  }
  const url = options.coordinatorUrl ?? options.env.AWAKEN_COORDINATOR_URL;
  if (!url) throw new WorkerConfigError("missing --coordinator-url (e.g. http://10.0.0.5:4600)");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WorkerConfigError(`--coordinator-url is not a URL: ${url}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new WorkerConfigError(`--coordinator-url must be http:// or https://, got ${parsed.protocol}`);
  const token = options.env[WORKER_TOKEN_ENV];
  if (!token)
    throw new WorkerConfigError(
      `missing ${WORKER_TOKEN_ENV}: set the same shared token on the coordinator (awaken up) and here`,
    );
  if (token.length < MIN_WORKER_TOKEN_LENGTH)
    throw new WorkerConfigError(`${WORKER_TOKEN_ENV} must be at least ${MIN_WORKER_TOKEN_LENGTH} characters`);
  let traceContent: boolean;
  try {
    traceContent = traceContentCeiling(options.env);
  } catch (error) {
    throw new WorkerConfigError((error as Error).message);
  }
  return { url: parsed.toString(), token, traceContent };
}

export interface RunningWorker {
  identity: string;
  /** Where this worker's metrics are scraped, when it serves them. */
  metricsUrl: string | null;
  stop(): Promise<void>;
}

/**
 * Connects to the coordinator (retrying while it is unreachable), learns its lease, then runs the
 * same claim → renew → run → settle loop as the in-process worker, over HTTP. `stopped` ends the
 * connection attempts early when a signal arrives before the coordinator answered.
 */
export async function startRemoteWorker(
  options: RemoteWorkerOptions,
  logger: Logger,
  stopped: () => boolean,
): Promise<RunningWorker | null> {
  const { url, token, traceContent } = checkWorkerConfig(options);
  let outbound: ReturnType<typeof outboundFor>;
  try {
    outbound = outboundFor(options.allowPrivateHosts, options.env);
  } catch (error) {
    if (error instanceof AllowListError) throw new WorkerConfigError(error.message);
    throw error;
  }
  // A store that cannot be used is a start-up error, not every container session's.
  let containerStorage: ContainerStorage | undefined;
  try {
    containerStorage = containerStorageFrom(options.containerStorage, options.env);
  } catch (error) {
    throw new WorkerConfigError((error as Error).message);
  }
  const log = logger.child({ component: "worker" });
  // A busy metrics port or a short metrics token is a start-up error, before the coordinator is even asked.
  let metricsToken: string | undefined;
  if (options.metrics) {
    try {
      metricsToken = metricsTokenFrom(options.env);
    } catch (error) {
      throw new WorkerConfigError((error as Error).message);
    }
    try {
      await assertCanListen(options.metrics.host, options.metrics.port);
    } catch (error) {
      throw new WorkerConfigError(
        `--metrics-port: ${(error as Error).message.replace(/--port\b/g, "--metrics-port").replace(/--host\b/g, "--metrics-host")}`,
      );
    }
  }
  // This process exports its own spans (run slices, model requests, tool calls) to the OTLP endpoint.
  const tracing = startOpenTelemetry(options.env, "awaken-worker") ?? undefined;
  const transport = new HttpWorkerTransport({ baseUrl: url, token, log, ...(tracing ? { tracing } : {}) });
  let config: Awaited<ReturnType<HttpWorkerTransport["config"]>> | null = null;
  while (!config) {
    if (stopped()) {
      transport.close();
      return null;
    }
    try {
      config = await transport.config();
    } catch (error) {
      if (error instanceof CoordinatorRejected) throw rejectionReason(error, url);
      // Unreachable: the transport already logged it once; keep trying until it answers.
      await sleep(1_000);
    }
  }
  const metrics = options.metrics ? createPrometheusMetrics() : undefined;
  let metricsServer: WorkerMetricsServer | null = null;
  if (options.metrics && metrics) {
    metricsServer = await startWorkerMetricsServer(options.metrics, metrics, metricsToken);
    log.info({ url: metricsServer.url }, "serving metrics");
  }
  const providers = createProviderRouter(options.env);
  const acp = acpRuntimePorts(options.acpRuntimes ?? acpRuntimeCatalog());
  const sandboxes = createSandboxes(
    options.workspaceDir,
    options.env,
    options.sandboxEgress,
    options.allowWeakerTiers === true,
    // Repository clones obey the same address policy as this host's MCP connections.
    outbound.policy,
    containerStorage,
  );
  for (const line of providers.describe()) logger.info({ component: "providers" }, line);
  await reportMissingBubblewrap(logger);
  await reportContainerTier(logger, options.env, containerStorage?.dir);
  const worker = new Worker(
    transport,
    {
      providers,
      sandboxes,
      clock: systemClock,
      retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: options.modelRetryBaseMs },
      crashBudget: 5,
      modelIdleTimeoutMs: options.modelIdleTimeoutMs,
      outcomeHeartbeatMs: outcomeHeartbeatFromEnv(options.env),
      log,
      // This process is the last-mile holder of its runs' credentials (the MCP connections, and
      // its sandboxes' egress proxies for `environment_variable` secrets): the coordinator checks
      // the claim, admits the session's pin, audits and sends the material back over the worker
      // transport. Use an https:// coordinator URL (or a private network) in production: the
      // response carries the secret.
      credentials: new RemoteCredentialHolder(transport),
      // The session's resources (files, skills, memory stores, repository tokens), each call over
      // the transport under the run's claim: the coordinator checks it and answers for that
      // session only. This process holds no store and no database handle.
      resources: new RemoteResources(transport),
      packageResolutions: new RemotePackageResolutions(transport),
      // The ACP runtimes this host launches (the operator's file; Control validated the names).
      acp,
      // Mounted content is written here, beside the sessions' workspaces (never inside one).
      mountArea: resolve(options.workspaceDir, ".mounts"),
      // This host connects to the MCP servers: the same address policy as the coordinator's.
      outbound,
      // MCP servers in a tunnel's domain: through the coordinator's relay, under the run's claim.
      tunnels: new RemoteTunnelRelay(transport),
      ...(metrics ? { metrics } : {}),
      ...(tracing ? { tracing } : {}),
      // The operator's ceiling on content in this worker's spans (AWAKEN_TRACE_CONTENT).
      traceContent,
    },
    {
      id: options.id ?? `${hostname()}-${process.pid}`,
      concurrency: options.concurrency,
      leaseMs: config.leaseMs,
      pollMs: config.pollMs,
      drainMs: options.drainMs ?? DEFAULT_DRAIN_MS,
    },
  );
  // Held open for the worker's life: its close tells the coordinator at once that this worker died.
  const presence = new PresenceStream({
    baseUrl: url,
    token,
    identity: worker.identity,
    held: () => worker.held(),
    log,
  });
  presence.start();
  worker.start();
  log.info({ coordinator: url, identity: worker.identity, leaseMs: config.leaseMs }, "worker connected");
  return {
    identity: worker.identity,
    metricsUrl: metricsServer?.url ?? null,
    stop: async () => {
      await worker.stop();
      // Last: the drained worker holds nothing, so the coordinator's lapse on this close finds nothing.
      await presence.close();
      await metricsServer?.close();
      await acp.harnesses.close();
      await sandboxes.close();
      await outbound.close();
      transport.close();
      await tracing?.flush().catch(() => {});
    },
  };
}

function rejectionReason(error: CoordinatorRejected, url: string): WorkerConfigError {
  if (error.status === 401)
    return new WorkerConfigError(
      `the coordinator at ${url} rejected the worker token (401): ${WORKER_TOKEN_ENV} must match the coordinator's`,
    );
  if (error.status === 404)
    return new WorkerConfigError(
      `the coordinator at ${url} serves no worker routes (404): start it with ${WORKER_TOKEN_ENV} set`,
    );
  return new WorkerConfigError(error.message);
}
