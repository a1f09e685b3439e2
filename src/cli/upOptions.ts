import type { RetryPolicy } from "../runtime/retryPolicy.js";

/** Options of `awaken up`, with the defaults documented where they are set (cli/main.ts). */
export interface UpOptions {
  host: string;
  port: number;
  /** Holds the API key file, and the SQLite database unless `databaseUrl` is set. */
  dataDir: string;
  /** `postgres://…`: keep the authority in PostgreSQL instead of `<dataDir>/awaken.db`. */
  databaseUrl?: string | undefined;
  /** In-process worker slots; 0 runs a server that executes nothing itself. */
  workers: number;
  leaseMs: number;
  /** A model stream silent this long is aborted and retried (default 300 s). */
  modelIdleTimeoutMs: number;
  ssePingMs: number;
  apiKey: string | undefined;
  retry: Partial<RetryPolicy>;
  env: NodeJS.ProcessEnv;
}
