import type { AcpRuntimeCatalog } from "../brains/ports.js";
import type { QuotaConfig } from "../coordinator/workspaceQuotas.js";
import type { PushPacing } from "../edge/a2a/push/pushPacing.js";
import type { ConnectionLimits } from "../edge/http/connectionLimits.js";
import type { Clock } from "../kernel/clock.js";
import type { RetryPolicy } from "../runtime/retryPolicy.js";
import type { EgressProxyOptions } from "../sandbox/egressProxy.js";

/** Options of `awaken up`, with the defaults documented where they are set (cli/main.ts). */
export interface UpOptions {
  host: string;
  port: number;
  /** False: serve no HTTP at all (the embedded runtime calls the services in process). Default true. */
  listen?: boolean | undefined;
  /** Holds the API key file, and the SQLite database unless `databaseUrl` is set. */
  dataDir: string;
  /** `postgres://…`: keep the authority in PostgreSQL instead of `<dataDir>/awaken.db`. */
  databaseUrl?: string | undefined;
  /** With `databaseUrl`: the most PostgreSQL connections the server's pool opens (default 20). */
  dbPoolSize?: number | undefined;
  /** In-process worker slots; 0 runs a server that executes nothing itself. */
  workers: number;
  /**
   * A split Coordinator: Control's services (IAM, authoring, vaults, custody, audit, consent) are
   * reached over the private link at `url` with AWAKEN_CONTROL_TOKEN; this process holds no master
   * key and serves Control the catalog registration and the sessions' pins. Absent: all-in-one.
   */
  control?: { url: string; token: string } | undefined;
  leaseMs: number;
  /** On SIGTERM, how long in-flight runs may finish before their claims are handed back (default 3 s). */
  drainMs?: number | undefined;
  /** A model stream silent this long is aborted and retried (default 300 s). */
  modelIdleTimeoutMs: number;
  ssePingMs: number;
  /**
   * Safety-net polling of streams (default 1 s) and idle worker slots (default 500 ms): wake
   * signals normally come first. Tests raise these so a prompt result proves the signal path.
   */
  streamPollMs?: number | undefined;
  workerPollMs?: number | undefined;
  apiKey: string | undefined;
  /** AWAKEN_WORKER_TOKEN: when set, remote workers may claim and commit over HTTP with it. */
  workerToken?: string | undefined;
  /** AWAKEN_BUILD_WORKER_TOKEN: when set, build workers may claim and settle image builds with it. */
  buildWorkerToken?: string | undefined;
  /** `--image-build-lease-s`: how long a build worker's claim holds unrenewed (default 60 s). */
  imageBuildLeaseMs?: number | undefined;
  retry: Partial<RetryPolicy>;
  /**
   * The operator enabled sandbox tiers weaker than the default (`none`: built-in tools as this
   * server's user, master key in reach): `--allow-unsandboxed-tier` or
   * AWAKEN_ALLOW_UNSANDBOXED_TIER=1. Off: environments and sessions naming one are refused.
   */
  allowWeakerTiers?: boolean | undefined;
  env: NodeJS.ProcessEnv;
  /** `--allow-private-mcp-host`: private hosts MCP connections may reach (else AWAKEN_ALLOW_PRIVATE_HOSTS, else none). */
  allowPrivateHosts?: string | undefined;
  /** `--allow-push-host`: webhook hosts push notifications may reach over http or privately (else AWAKEN_ALLOW_PUSH_HOSTS, else none). */
  allowPushHosts?: string | undefined;
  /** Client connection time and count bounds; defaults in edge/http/connectionLimits.ts. */
  connections?: Partial<ConnectionLimits> | undefined;
  /**
   * The ACP runtimes `acp:<runtime>` models may name: the shipped ones plus the operator's
   * `--acp-runtimes` file. Absent: the shipped ones alone.
   */
  acpRuntimes?: AcpRuntimeCatalog | undefined;
  /** Workspace quotas the operator set (`--quotas`); absent, no workspace is limited. */
  quotas?: QuotaConfig | undefined;
  /** Push delivery pacing; tests shorten it. Defaults in edge/a2a/push/pushOptions.ts. */
  push?: Partial<PushPacing> | undefined;
  /** The built Console to serve at `/console`; default the package's own dist/console. */
  consoleDir?: string | undefined;
  /**
   * The bwrap egress proxies' resolver, address policy and upstream CAs. Tests only (a local
   * upstream on the loopback): the product's defaults are the host's resolver, public addresses
   * only and Node's own CA list; the CLI never sets it.
   */
  sandboxEgress?: EgressProxyOptions | undefined;
  /**
   * The server's time source. Tests only (one advances it past a lease, a rate limit or a token's
   * expiry instead of sleeping); the CLI never sets it: the system clock.
   */
  clock?: Clock | undefined;
}
