import { Command, InvalidArgumentError, Option } from "commander";
import { pino } from "pino";
import { startAllInOne } from "./allInOne.js";
import { migrateDatabase } from "./migrate.js";
import { type RunningWorker, startRemoteWorker, WorkerConfigError } from "./worker.js";

const STORAGE_HELP = `
Storage:
  default               an embedded SQLite file, <data-dir>/awaken.db (one process)
  --database-url URL    PostgreSQL instead, e.g. postgres://user:pass@host:5432/awaken; add
                        ?options=-c%20search_path%3Dmyschema to use a schema other than public
                        (it must exist). --data-dir still holds the API key file.
  Opening a database migrates it to the latest schema (awaken up does, awaken migrate does only
  that); on PostgreSQL under an advisory lock, so replicas starting together migrate it once.
`;

const HELP_AFTER = `${STORAGE_HELP}
Models:
  claude-*  run on the Anthropic Messages API when ANTHROPIC_API_KEY is set (ANTHROPIC_BASE_URL optional)
  gpt-*     run on an OpenAI-compatible chat completions API when OPENAI_API_KEY is set (OPENAI_BASE_URL optional)
  otherwise an OFFLINE model answers: deterministic, no network, every answer starts with
  "[offline model]". Ask it to "call <tool_name>" to exercise a custom tool round trip.

Environment:
  AWAKEN_API_KEY        API key of the default workspace (else generated once into <data-dir>/api-key)
  AWAKEN_LOG_LEVEL      pino log level (default info); logs go to stderr
  AWAKEN_WORKER_TOKEN   when set (≥ 16 characters), remote workers (awaken worker) may claim and
                        commit runs over HTTP with this shared token; unset, those routes do not exist
`;

function integer(name: string, min: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

const program = new Command()
  .name("awaken")
  .description("Awaken Agents: a self-hostable agent execution platform speaking the Managed Agents wire.")
  .showHelpAfterError();

program
  .command("up")
  .description(
    "Run the all-in-one server (control, coordinator, workers) on an embedded SQLite file, or on PostgreSQL with --database-url.",
  )
  .addOption(new Option("--host <host>", "address to listen on").default("127.0.0.1"))
  .addOption(
    new Option("--port <port>", "port to listen on (0 = any free port)")
      .default(4600)
      .argParser(integer("--port", 0)),
  )
  .addOption(
    new Option(
      "--data-dir <dir>",
      "where the API key (and the SQLite database, without --database-url) live",
    ).default(".awaken"),
  )
  .addOption(
    new Option("--database-url <url>", "keep the authority in PostgreSQL (postgres://…) instead of SQLite"),
  )
  .addOption(
    new Option("--workers <n>", "in-process worker slots (runs executed at once)")
      .default(4)
      .argParser(integer("--workers", 0)),
  )
  .addOption(
    new Option("--lease-ms <ms>", "claim lease; a crashed run is resumed after it lapses")
      .default(15_000)
      .argParser(integer("--lease-ms", 100)),
  )
  .addOption(
    new Option("--sse-ping-ms <ms>", "keep-alive ping interval on event streams")
      .default(15_000)
      .argParser(integer("--sse-ping-ms", 10)),
  )
  .addOption(
    new Option("--model-retry-base-ms <ms>", "first backoff after a transient model error")
      .default(1_000)
      .argParser(integer("--model-retry-base-ms", 0)),
  )
  .addOption(
    new Option("--model-idle-timeout-s <s>", "abort and retry a model stream silent for this long")
      .default(300)
      .argParser(integer("--model-idle-timeout-s", 1)),
  )
  .addHelpText("after", HELP_AFTER)
  .action(async (opts) => {
    const logger = pino({ level: process.env.AWAKEN_LOG_LEVEL ?? "info" }, pino.destination(2));
    // Signal handlers go in before anything is printed: a supervisor may send SIGTERM the moment
    // it reads the banner, and an unhandled SIGTERM would kill the process without a clean stop.
    let server: Awaited<ReturnType<typeof startAllInOne>> | null = null;
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, "shutting down");
      // Hard deadline: a clean stop takes well under this; never hang an orchestrator.
      setTimeout(() => process.exit(1), 9_000).unref();
      if (!server) return; // still starting: the start-up path below stops it when it is ready
      server.stop().then(
        () => process.exit(0),
        (error) => {
          logger.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
    };
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    process.on("SIGINT", () => shutdown("SIGINT"));

    server = await startAllInOne(
      {
        host: opts.host,
        port: opts.port,
        dataDir: opts.dataDir,
        databaseUrl: opts.databaseUrl,
        workers: opts.workers,
        leaseMs: opts.leaseMs,
        modelIdleTimeoutMs: opts.modelIdleTimeoutS * 1000,
        ssePingMs: opts.ssePingMs,
        apiKey: process.env.AWAKEN_API_KEY || undefined,
        workerToken: process.env.AWAKEN_WORKER_TOKEN || undefined,
        retry: { baseDelayMs: opts.modelRetryBaseMs },
        env: process.env,
      },
      logger,
    );
    if (stopping) {
      await server.stop();
      process.exit(0);
    }
    const keyNote =
      server.apiKeySource === "env" ? "(from AWAKEN_API_KEY)" : `(stored in ${opts.dataDir}/api-key)`;
    process.stdout.write(
      `Awaken Agents is listening on ${server.url}\n` +
        `API key: ${server.apiKey} ${keyNote}\n` +
        `Try it:  new Anthropic({ baseURL: "${server.url}", apiKey: "<the key above>" })\n` +
        `Storage: ${server.storage}\n`,
    );
  });

program
  .command("migrate")
  .description(
    "Bring the database to the latest schema and print what was applied (awaken up also does this on start).",
  )
  .addOption(
    new Option("--data-dir <dir>", "migrate <dir>/awaken.db (without --database-url)").default(".awaken"),
  )
  .addOption(new Option("--database-url <url>", "migrate this PostgreSQL database (postgres://…) instead"))
  .addHelpText("after", STORAGE_HELP)
  .action(async (opts) => {
    const report = await migrateDatabase({ dataDir: opts.dataDir, databaseUrl: opts.databaseUrl });
    const lines =
      report.applied.length === 0
        ? [`${report.target}: already up to date, nothing applied`]
        : [
            `${report.target}: applied ${report.applied.length} migration(s)`,
            ...report.applied.map((n) => `  ${n}`),
          ];
    process.stdout.write(`${lines.join("\n")}\n`);
  });

const WORKER_HELP = `
A worker has no database: it claims runs from a coordinator (awaken up, any --workers) over HTTP,
renews their leases, commits every step through the coordinator's fence and settles them. Start
and stop any number of them at will; a worker killed mid-run is resumed by another once its lease
(the coordinator's --lease-ms) lapses. SIGTERM drains: in-flight runs get 3 s, then are handed back.

Environment:
  AWAKEN_WORKER_TOKEN     required: the shared token, the same on the coordinator (≥ 16 characters)
  AWAKEN_COORDINATOR_URL  used when --coordinator-url is not given
  ANTHROPIC_API_KEY, OPENAI_API_KEY, …  model providers, exactly as for awaken up (the worker calls them)
  AWAKEN_LOG_LEVEL        pino log level (default info); logs go to stderr

Refused at start-up: a database URL (--database-url, AWAKEN_DATABASE_URL or DATABASE_URL), a missing
token or coordinator URL, and a coordinator that rejects the token (401).
`;

program
  .command("worker")
  .description("Run a remote worker that executes runs for a coordinator over HTTP (no database access).")
  .addOption(new Option("--coordinator-url <url>", "the coordinator's base URL, e.g. http://10.0.0.5:4600"))
  .addOption(
    new Option("--concurrency <n>", "runs executed at once")
      .default(4)
      .argParser(integer("--concurrency", 1)),
  )
  .addOption(new Option("--id <name>", "worker name in claims and logs (default <hostname>-<pid>)"))
  .addOption(new Option("--database-url <url>", "refused: a worker never opens the database").hideHelp())
  .addOption(
    new Option("--model-retry-base-ms <ms>", "first backoff after a transient model error")
      .default(1_000)
      .argParser(integer("--model-retry-base-ms", 0)),
  )
  .addOption(
    new Option("--model-idle-timeout-s <s>", "abort and retry a model stream silent for this long")
      .default(300)
      .argParser(integer("--model-idle-timeout-s", 1)),
  )
  .addHelpText("after", WORKER_HELP)
  .action(async (opts) => {
    const logger = pino({ level: process.env.AWAKEN_LOG_LEVEL ?? "info" }, pino.destination(2));
    let worker: RunningWorker | null = null;
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, "worker shutting down");
      setTimeout(() => process.exit(1), 9_000).unref();
      if (!worker) return; // still connecting: the start-up path below exits
      worker.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    process.on("SIGINT", () => shutdown("SIGINT"));
    try {
      worker = await startRemoteWorker(
        {
          coordinatorUrl: opts.coordinatorUrl,
          databaseUrl: opts.databaseUrl,
          concurrency: opts.concurrency,
          id: opts.id,
          modelIdleTimeoutMs: opts.modelIdleTimeoutS * 1000,
          modelRetryBaseMs: opts.modelRetryBaseMs,
          env: process.env,
        },
        logger,
        () => stopping,
      );
    } catch (error) {
      if (!(error instanceof WorkerConfigError)) throw error;
      console.error(`awaken worker refuses to start: ${error.message}`);
      process.exit(2);
    }
    if (!worker || stopping) {
      await worker?.stop();
      process.exit(0);
    }
    process.stdout.write(`Awaken worker ${worker.identity} is running\n`);
  });

program.parseAsync(process.argv).catch((error) => {
  console.error(`awaken: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
