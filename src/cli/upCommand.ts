import { Command, Option } from "commander";
import type { Logger } from "pino";
import { acpRuntimeCatalogFrom } from "../brains/catalog.js";
import {
  DEFAULT_BUILD_LEASE_MS,
  MAX_BUILD_LEASE_MS,
  MIN_BUILD_LEASE_MS,
} from "../coordinator/imageBuilds/imageBuildService.js";
import { DEFAULT_PUSH_PACING } from "../edge/a2a/push/pushPacing.js";
import {
  ALLOW_WEAKER_TIERS_ENV,
  ALLOW_WEAKER_TIERS_FLAG,
  weakerTiersAllowedByEnv,
} from "../kernel/sandboxTiers.js";
import { EXECUTION_DEFAULTS, executionOptions } from "../worker/workerOptions.js";
import { acpRuntimesOption } from "./acpRuntimesOption.js";
import { startAllInOne } from "./allInOne.js";
import { cliLogger, logLevelOption } from "./cliLogger.js";
import {
  drainOption,
  executionFlag,
  installShutdown,
  integer,
  modelOptions,
  portNumber,
  UNSANDBOXED_WARNING,
  unsandboxedHelp,
} from "./commandSupport.js";
import { connectionLimitsFrom, connectionOptions } from "./connectionOptions.js";
import { apiKeyBannerLine } from "./controlPlane.js";
import { METRICS_TOKEN_ENV } from "./metricsToken.js";
import { STORAGE_HELP } from "./migrateCommand.js";
import { allowPrivateHostOption, allowPushHostOption } from "./outbound.js";
import { QUOTAS_FILE_ENV, readQuotasFile } from "./quotasFile.js";
import { DEFAULT_DB_POOL_SIZE } from "./storage.js";
import type { UpOptions } from "./upOptions.js";

const HELP_AFTER = `${STORAGE_HELP}
Models:
  claude-*  run on the Anthropic Messages API when ANTHROPIC_API_KEY is set (ANTHROPIC_BASE_URL optional)
  gpt-*     run on an OpenAI-compatible chat completions API when OPENAI_API_KEY is set (OPENAI_BASE_URL optional)
  otherwise an OFFLINE model answers: deterministic, no network, every answer starts with
  "[offline model]". Ask it to "call <tool_name>" to exercise a custom tool round trip.

Environment:
  AWAKEN_API_KEY        API key of the default workspace (else generated once into <data-dir>/api-key)
  AWAKEN_LOG_LEVEL      pino log level (default info); logs go to stderr (JSON, or readable
                        on a terminal unless AWAKEN_LOG_FORMAT=json)
  AWAKEN_MASTER_KEY     base64 32-byte key that seals vault credentials (else generated once into
                        <data-dir>/master.key, mode 0600); replicas must share it (one without
                        the database's key refuses to start); back it up
  ${ALLOW_WEAKER_TIERS_ENV}=1  same as ${ALLOW_WEAKER_TIERS_FLAG}
  AWAKEN_ALLOW_PRIVATE_HOSTS  private MCP hosts / CIDRs the server may connect to for users
                        (--allow-private-mcp-host wins); unset, no loopback or private address
  AWAKEN_ALLOW_PUSH_HOSTS  webhook hosts / CIDRs A2A push notifications may reach over http or at
                        private addresses (--allow-push-host wins); unset, https to public ones only
  AWAKEN_BUILD_WORKER_TOKEN  when set (≥ 16 characters), build workers (awaken build-worker) may
                        claim container image builds and report their digests with it
  AWAKEN_WORKER_TOKEN   when set (≥ 16 characters), remote workers (awaken worker) may claim and
                        commit runs over HTTP with this shared token; unset, those routes do not exist
  ${METRICS_TOKEN_ENV}  when set (≥ 16 characters), GET /metrics requires Authorization: Bearer
                        <token>; unset, /metrics is open (it carries counts, route patterns, built-in
                        tool and published model names only): keep it off public networks
  AWAKEN_TRACE_CONTENT  on: the in-process workers' spans may carry content (prompts, answers, tool
                        I/O) of sessions that ask and whose data subject consented; off (default)
`;

/**
 * The options every server command shares (`up`, `coordinator`): where it listens, its store,
 * its workers, leases, streams, models, outbound policy and push pacing.
 */
/** `awaken up`'s defaults for the server options it shares with `awaken coordinator`. */
export const UP_SERVER_DEFAULTS = {
  port: 4600,
  workers: EXECUTION_DEFAULTS.concurrency,
  dataDir: ".awaken",
  dataDirHolds: "the API key, the master key (and the SQLite database, without --database-url)",
  unsandboxedReach: "the data dir and the master key",
};

export function addServerOptions(
  command: Command,
  defaults: {
    port: number;
    workers: number;
    dataDir: string;
    /** What the data dir holds, for its help (a coordinator keeps no API key and no master key). */
    dataDirHolds: string;
    /** What an unsandboxed built-in tool could read in this process. */
    unsandboxedReach: string;
  },
): Command {
  command
    .addOption(new Option("--host <host>", "address to listen on").default("127.0.0.1"))
    .addOption(logLevelOption())
    .addOption(
      new Option("--port <port>", "port to listen on (0 = any free port)")
        .default(defaults.port)
        .argParser(portNumber("--port")),
    )
    .addOption(
      new Option("--data-dir <dir>", `where ${defaults.dataDirHolds} live`).default(defaults.dataDir),
    )
    .addOption(
      new Option(
        "--quotas <file>",
        "workspace quotas (JSON: concurrent_runs, sessions_per_hour, tokens_per_day, list_cost_per_day_usd)",
      ).env(QUOTAS_FILE_ENV),
    )
    .addOption(acpRuntimesOption())
    .addOption(
      new Option(
        "--database-url <url>",
        "keep the authority in PostgreSQL (postgres://…) instead of SQLite; set in the environment, its password stays out of the process list",
      ).env("AWAKEN_DATABASE_URL"),
    )
    .addOption(
      new Option(
        "--db-pool-size <n>",
        "with --database-url: the most PostgreSQL connections the server opens for queries (the wake LISTEN uses one more)",
      )
        .default(DEFAULT_DB_POOL_SIZE)
        .argParser(integer("--db-pool-size", 1)),
    )
    .addOption(
      new Option("--workers <n>", "in-process worker slots (runs executed at once)")
        .default(defaults.workers)
        .argParser(executionFlag("concurrency", "--workers")),
    )
    .addOption(
      new Option("--lease-ms <ms>", "claim lease; a crashed run is resumed after it lapses")
        .default(EXECUTION_DEFAULTS.leaseMs)
        .argParser(executionFlag("leaseMs", "--lease-ms")),
    )
    .addOption(
      new Option("--sse-ping-ms <ms>", "keep-alive ping interval on event streams")
        .default(15_000)
        .argParser(integer("--sse-ping-ms", 10)),
    )
    .addOption(new Option(ALLOW_WEAKER_TIERS_FLAG, unsandboxedHelp(defaults.unsandboxedReach)));
  command.addOption(drainOption());
  for (const option of modelOptions()) command.addOption(option);
  for (const option of connectionOptions()) command.addOption(option);
  command.addOption(allowPrivateHostOption());
  command.addOption(allowPushHostOption());
  command.addOption(
    new Option(
      "--push-retry-base-ms <ms>",
      "first backoff after a failed push-notification delivery (doubles each attempt)",
    )
      .default(DEFAULT_PUSH_PACING.retryBaseMs)
      .argParser(integer("--push-retry-base-ms", 10)),
  );
  return command;
}

/** How the server commands spell the execution figures, for the options step's errors. */
const UP_FLAGS = {
  concurrency: "--workers",
  leaseMs: "--lease-ms",
  drainMs: "--drain-ms",
  modelRetryBaseMs: "--model-retry-base-ms",
};

/** What `addServerOptions` parsed, as the server's options (the caller adds its own). */
// biome-ignore lint/suspicious/noExplicitAny: commander's parsed options are untyped
export function serverOptionsFrom(opts: any, logger: Logger): Omit<UpOptions, "apiKey" | "workerToken"> {
  const allowWeakerTiers = opts.allowUnsandboxedTier === true || weakerTiersAllowedByEnv(process.env);
  if (allowWeakerTiers) logger.warn({ component: "sandbox" }, UNSANDBOXED_WARNING);
  const execution = executionOptions(
    {
      concurrency: opts.workers,
      leaseMs: opts.leaseMs,
      drainMs: opts.drainMs,
      modelIdleTimeoutMs: opts.modelIdleTimeoutS * 1000,
      modelRetryBaseMs: opts.modelRetryBaseMs,
    },
    UP_FLAGS,
  );
  return {
    host: opts.host,
    port: opts.port,
    dataDir: opts.dataDir,
    databaseUrl: opts.databaseUrl,
    dbPoolSize: opts.dbPoolSize,
    workers: execution.concurrency,
    leaseMs: execution.leaseMs,
    drainMs: execution.drainMs,
    modelIdleTimeoutMs: execution.modelIdleTimeoutMs,
    ssePingMs: opts.ssePingMs,
    retry: { baseDelayMs: execution.modelRetryBaseMs },
    allowWeakerTiers,
    env: process.env,
    allowPrivateHosts: opts.allowPrivateMcpHost,
    allowPushHosts: opts.allowPushHost,
    push: { retryBaseMs: opts.pushRetryBaseMs },
    connections: connectionLimitsFrom(opts),
    ...(typeof opts.quotas === "string" && opts.quotas !== "" ? { quotas: readQuotasFile(opts.quotas) } : {}),
    acpRuntimes: acpRuntimeCatalogFrom(opts.acpRuntimes),
  };
}

/**
 * `--image-build-lease-s`: a build worker killed outright holds its build this long before the next
 * may claim it. Only `awaken up` serves build workers (AWAKEN_BUILD_WORKER_TOKEN).
 */
function imageBuildLeaseOption(): Option {
  return new Option(
    "--image-build-lease-s <s>",
    "image build lease: a build worker renews it every third; one killed outright leaves its build to the next once it lapses",
  )
    .default(DEFAULT_BUILD_LEASE_MS / 1000)
    .argParser(integer("--image-build-lease-s", MIN_BUILD_LEASE_MS / 1000, MAX_BUILD_LEASE_MS / 1000));
}

/** `awaken up`: the all-in-one server. */
export function upCommand(): Command {
  const command = new Command("up").description(
    "Run the all-in-one server (control, coordinator, workers) on an embedded SQLite file, or on PostgreSQL with --database-url.",
  );
  addServerOptions(command, UP_SERVER_DEFAULTS);
  command.addOption(imageBuildLeaseOption());
  return command.addHelpText("after", HELP_AFTER).action(async (opts) => {
    const logger = cliLogger(process.env, opts.logLevel);
    const lifecycle = installShutdown(logger, "server", opts.drainMs);
    const server = await startAllInOne(
      {
        ...serverOptionsFrom(opts, logger),
        apiKey: process.env.AWAKEN_API_KEY || undefined,
        workerToken: process.env.AWAKEN_WORKER_TOKEN || undefined,
        buildWorkerToken: process.env.AWAKEN_BUILD_WORKER_TOKEN || undefined,
        imageBuildLeaseMs: opts.imageBuildLeaseS * 1000,
      },
      logger,
    );
    if (!(await lifecycle.ready(server))) return;
    const keyLine = apiKeyBannerLine(server.apiKey, server.apiKeySource, opts.dataDir);
    process.stdout.write(
      `Awaken Agents is listening on ${server.url}\n` +
        keyLine +
        `Try it:  new Anthropic({ baseURL: "${server.url}", apiKey: "<the key above>" })\n` +
        `Console: ${server.url}/console (sign in with the API key)\n` +
        `Storage: ${server.storage}\n`,
    );
  });
}
