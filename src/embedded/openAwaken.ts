import { type Logger, pino } from "pino";
import { startAllInOne } from "../cli/allInOne.js";
import type { UpOptions } from "../cli/upOptions.js";
import { DEFAULT_WORKSPACE_ID } from "../control/iamService.js";
import { type InProcessBeta, inProcessBeta } from "../edge/managed-agents/inProcess/inProcessBeta.js";
import { weakerTiersAllowedByEnv } from "../kernel/sandboxTiers.js";
import { executionOptions } from "../worker/workerOptions.js";

/** Where the embedded runtime keeps its authority: one of the two, as `awaken up` takes them. */
export type OpenAwakenOptions = (
  | {
      /** `postgres://…` (name a schema with `?options=-c search_path=x`); migrated on open. */
      databaseUrl: string;
      /** Holds `master.key`, `api-key` and sandbox workspaces (default `.awaken`, mode 0700). */
      dataDir?: string;
    }
  | {
      /** The embedded SQLite file `<dataDir>/awaken.db`, with the master key and workspaces beside it. */
      dataDir: string;
      databaseUrl?: undefined;
    }
) & {
  /** In-process worker slots (runs executed at once), as `awaken up --workers`; default 4, 0 runs none. */
  workers?: number;
  /**
   * The variables `awaken up` reads: model providers (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, their
   * base URLs), `AWAKEN_MASTER_KEY`, `AWAKEN_API_KEY`, `AWAKEN_ALLOW_UNSANDBOXED_TIER`,
   * `AWAKEN_ALLOW_PRIVATE_HOSTS`. Default `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /** With `databaseUrl`: the most PostgreSQL connections of its pool (default 20). */
  dbPoolSize?: number;
  /** Claim lease; a run of a process that died is resumed after it lapses (default 15 s). */
  leaseMs?: number;
  /** A pino logger; default JSON lines on stderr at `AWAKEN_LOG_LEVEL` (default `warn`). */
  logger?: Logger;
};

/** An open embedded runtime. */
export interface Awaken {
  /** The official SDK's `client.beta` (agents, environments, sessions, sessions.events), in process. */
  beta: InProcessBeta;
  /** Which database holds the authority (no password). */
  storage: string;
  /** Lets in-flight runs finish (up to the drain), stops the workers and closes the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * The server options `openAwaken` starts with: the same options step as `awaken up` and
 * `awaken worker` (worker/workerOptions.ts), so a bad figure is refused by name before anything opens.
 */
export function embeddedServerOptions(options: OpenAwakenOptions, env: NodeJS.ProcessEnv): UpOptions {
  const execution = executionOptions(
    { concurrency: options.workers, leaseMs: options.leaseMs },
    { concurrency: "workers" },
  );
  return {
    listen: false,
    host: "127.0.0.1",
    port: 0,
    dataDir: options.dataDir ?? ".awaken",
    databaseUrl: options.databaseUrl,
    dbPoolSize: options.dbPoolSize,
    workers: execution.concurrency,
    leaseMs: execution.leaseMs,
    drainMs: execution.drainMs,
    modelIdleTimeoutMs: execution.modelIdleTimeoutMs,
    ssePingMs: 15_000,
    apiKey: env.AWAKEN_API_KEY || undefined,
    retry: { baseDelayMs: execution.modelRetryBaseMs },
    allowWeakerTiers: weakerTiersAllowedByEnv(env),
    env,
  };
}

/**
 * The all-in-one runtime inside the caller's process: the same composition `awaken up` starts
 * (stores, coordinator, workers, providers from the same variables), without HTTP. `awaken.beta`
 * is one more edge over the same services; nothing it does bypasses the commit fence.
 */
export async function openAwaken(options: OpenAwakenOptions): Promise<Awaken> {
  const env = options.env ?? process.env;
  const serverOptions = embeddedServerOptions(options, env);
  const logger =
    options.logger ??
    pino({ level: env.AWAKEN_LOG_LEVEL || "warn" }, pino.destination({ fd: 2, sync: false }));
  const server = await startAllInOne(serverOptions, logger);
  // The process that embeds the runtime is its operator: it acts in the default workspace, the
  // one `awaken up`'s bootstrap API key opens.
  const beta = inProcessBeta(server.services, DEFAULT_WORKSPACE_ID, (requestId, error) =>
    logger.error({ err: error, requestId }, "unhandled error in an in-process call"),
  );
  return { beta, storage: server.storage, close: () => server.stop() };
}
