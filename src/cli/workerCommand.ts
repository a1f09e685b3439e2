import { Command, Option } from "commander";
import { acpRuntimeCatalogFrom } from "../brains/catalog.js";
import {
  ALLOW_WEAKER_TIERS_ENV,
  ALLOW_WEAKER_TIERS_FLAG,
  weakerTiersAllowedByEnv,
} from "../kernel/sandboxTiers.js";
import type { EgressProxyOptions } from "../sandbox/egressProxy.js";
import { EXECUTION_DEFAULTS, executionOptions } from "../worker/workerOptions.js";
import { acpRuntimesOption } from "./acpRuntimesOption.js";
import { cliLogger, logLevelOption } from "./cliLogger.js";
import {
  drainOption,
  executionFlag,
  installShutdown,
  modelOptions,
  portNumber,
  UNSANDBOXED_WARNING,
  unsandboxedHelp,
} from "./commandSupport.js";
import { allowPrivateHostOption } from "./outbound.js";
import { startRemoteWorker, WorkerConfigError } from "./worker.js";

const WORKER_HELP = `
A worker has no database: it claims runs from a coordinator (awaken up, any --workers) over HTTP,
renews their leases, commits every step through the coordinator's fence and settles them. Start
and stop any number of them at will; a worker killed mid-run is resumed by another once its lease
(the coordinator's --lease-ms) lapses. SIGTERM drains: no new claims, in-flight runs get --drain-ms (default 3 s) to finish, then are
handed back to other workers at once.

Environment:
  AWAKEN_WORKER_TOKEN     required: the shared token, the same on the coordinator (≥ 16 characters)
  AWAKEN_COORDINATOR_URL  used when --coordinator-url is not given
  ANTHROPIC_API_KEY, OPENAI_API_KEY, …  model providers, exactly as for awaken up (the worker calls them)
  AWAKEN_LOG_LEVEL        pino log level (default info); logs go to stderr (JSON, or readable
                          on a terminal unless AWAKEN_LOG_FORMAT=json)
  ${ALLOW_WEAKER_TIERS_ENV}=1  same as ${ALLOW_WEAKER_TIERS_FLAG}
  AWAKEN_ALLOW_PRIVATE_HOSTS  private MCP hosts / CIDRs this worker may connect to for runs
                          (--allow-private-mcp-host wins); unset, no loopback or private address
  AWAKEN_CONTAINER_STORAGE  used when --container-storage is not given
  AWAKEN_TRACE_CONTENT    on: this worker's spans may carry content (prompts, answers, tool I/O)
                          of sessions that ask and whose data subject consented; off (default)

Credentials: the pinned credential an MCP server of a run needs is opened by the coordinator (after
it checked this worker's claim on the run) and sent to this worker, the holder of that connection,
over the worker transport; so is an environment_variable secret, for the egress proxy of this
worker's bwrap sandbox (commands only ever see a placeholder). Use an https:// coordinator URL or
a private network in production.

Metrics: --metrics-port serves this process's own GET /metrics (model requests, tokens, tool calls,
commits, settles, sandbox realizations of the runs it executes; the coordinator counts the claims).
Off by default; it listens on 127.0.0.1 unless --metrics-host says otherwise. With
AWAKEN_METRICS_TOKEN set (≥ 16 characters) it requires Authorization: Bearer <token>.

Refused at start-up: a database URL (--database-url, AWAKEN_DATABASE_URL or DATABASE_URL), a missing
token or coordinator URL, an allow-list entry that is no host, address or CIDR range, and a
coordinator that rejects the token (401).
`;

/**
 * What a test's own entry point may inject into `awaken worker` (test/support/egressWorkerEntry.mjs):
 * functions and CAs no flag or variable can carry, so the product CLI (main.ts) never passes any.
 */
export interface WorkerCommandTestHooks {
  sandboxEgress?: EgressProxyOptions;
}

/** `awaken worker`: a remote worker with no database. */
export function workerCommand(testHooks: WorkerCommandTestHooks = {}): Command {
  const command = new Command("worker")
    .description("Run a remote worker that executes runs for a coordinator over HTTP (no database access).")
    .addOption(new Option("--coordinator-url <url>", "the coordinator's base URL, e.g. http://10.0.0.5:4600"))
    .addOption(logLevelOption())
    .addOption(
      new Option("--concurrency <n>", "runs executed at once")
        .default(EXECUTION_DEFAULTS.concurrency)
        // A remote worker that executes nothing has no reason to run.
        .argParser(executionFlag("concurrency", "--concurrency", 1)),
    )
    .addOption(
      new Option("--workspace-dir <path>", "where sessions' sandbox workspaces live on this host").default(
        ".awaken/workspaces",
      ),
    )
    .addOption(
      new Option(
        "--container-storage <dir>",
        "this host's own podman image store for container-tier sessions (absolute; created 0700); default: podman's",
      ),
    )
    .addOption(new Option("--id <name>", "worker name in claims and logs (default <hostname>-<pid>)"))
    .addOption(
      new Option(
        ALLOW_WEAKER_TIERS_FLAG,
        unsandboxedHelp("this worker's files, its worker token and the credentials of the runs it holds"),
      ),
    )
    .addOption(
      new Option(
        "--metrics-port <n>",
        "serve this worker's Prometheus metrics at http://HOST:N/metrics (0: any free port)",
      ).argParser(portNumber("--metrics-port")),
    )
    .addOption(
      new Option(
        "--metrics-host <address>",
        "address the metrics port listens on (0.0.0.0 for every interface)",
      ).default("127.0.0.1"),
    )
    .addOption(new Option("--database-url <url>", "refused: a worker never opens the database").hideHelp());
  command.addOption(drainOption());
  for (const option of modelOptions()) command.addOption(option);
  command.addOption(allowPrivateHostOption());
  command.addOption(acpRuntimesOption());
  return command.addHelpText("after", WORKER_HELP).action(async (opts) => {
    const logger = cliLogger(process.env, opts.logLevel);
    const lifecycle = installShutdown(logger, "worker", opts.drainMs);
    const allowWeakerTiers = opts.allowUnsandboxedTier === true || weakerTiersAllowedByEnv(process.env);
    if (allowWeakerTiers) logger.warn({ component: "sandbox" }, UNSANDBOXED_WARNING);
    // Lease and poll are the coordinator's: it serves them to every worker it accepts.
    const execution = executionOptions(
      {
        concurrency: opts.concurrency,
        drainMs: opts.drainMs,
        modelIdleTimeoutMs: opts.modelIdleTimeoutS * 1000,
        modelRetryBaseMs: opts.modelRetryBaseMs,
      },
      { concurrency: "--concurrency", drainMs: "--drain-ms", modelRetryBaseMs: "--model-retry-base-ms" },
    );
    let worker: Awaited<ReturnType<typeof startRemoteWorker>>;
    try {
      worker = await startRemoteWorker(
        {
          coordinatorUrl: opts.coordinatorUrl,
          databaseUrl: opts.databaseUrl,
          concurrency: execution.concurrency,
          drainMs: execution.drainMs,
          id: opts.id,
          modelIdleTimeoutMs: execution.modelIdleTimeoutMs,
          modelRetryBaseMs: execution.modelRetryBaseMs,
          workspaceDir: opts.workspaceDir,
          containerStorage: opts.containerStorage,
          allowWeakerTiers,
          env: process.env,
          allowPrivateHosts: opts.allowPrivateMcpHost,
          acpRuntimes: acpRuntimeCatalogFrom(opts.acpRuntimes),
          sandboxEgress: testHooks.sandboxEgress,
          metrics:
            opts.metricsPort === undefined ? undefined : { host: opts.metricsHost, port: opts.metricsPort },
        },
        logger,
        lifecycle.stopping,
      );
    } catch (error) {
      if (!(error instanceof WorkerConfigError)) throw error;
      console.error(`awaken worker refuses to start: ${error.message}`);
      process.exit(2);
    }
    if (!worker) process.exit(0); // stopped while connecting
    if (!(await lifecycle.ready(worker))) return;
    const metricsNote = worker.metricsUrl ? ` (metrics: ${worker.metricsUrl})` : "";
    process.stdout.write(`Awaken worker ${worker.identity} is running${metricsNote}\n`);
  });
}
