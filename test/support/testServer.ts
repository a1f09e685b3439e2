import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { type Logger, pino } from "pino";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import type { UpOptions } from "../../src/cli/upOptions.js";
import type { Clock } from "../../src/kernel/clock.js";

export interface TestServer {
  server: RunningServer;
  client: Anthropic;
  dataDir: string;
  close(): Promise<void>;
}

export const TEST_API_KEY = "sk-awaken-test-key";
/** The allow-list entry that lets a server reach the fake MCP and OAuth servers tests run on 127.0.0.1. */
export const LOOPBACK = "127.0.0.1";
/** The master key of PostgreSQL test servers (base64 of 32 bytes; a test value, never a real one). */
export const TEST_MASTER_KEY = Buffer.alloc(32, 0x5a).toString("base64");

/**
 * The real all-in-one server on a temporary SQLite file (or the PostgreSQL `databaseUrl`) and an
 * ephemeral port, in this process. Tests talk to it only over HTTP through the official SDK.
 */
export async function startTestServer(
  options: {
    env?: NodeJS.ProcessEnv;
    leaseMs?: number;
    ssePingMs?: number;
    retryBaseMs?: number;
    retryMaxMs?: number;
    modelIdleTimeoutMs?: number;
    workers?: number;
    databaseUrl?: string;
    streamPollMs?: number;
    workerPollMs?: number;
    /** Serves the worker transport to remote workers holding this token (`awaken up` with it set). */
    workerToken?: string;
    /** The operator option `--allow-unsandboxed-tier`: environments may choose tier "none". */
    allowWeakerTiers?: boolean;
    /**
     * `--allow-private-mcp-host`: tests whose MCP servers or token endpoints listen on the loopback
     * pass `LOOPBACK`, as an operator would list a private host. Unset, the loopback is refused.
     */
    allowPrivateHosts?: string;
    /** `--allow-push-host`: tests whose webhook receivers listen on the loopback pass `LOOPBACK`. */
    allowPushHosts?: string;
    /** Push delivery pacing (the server's defaults otherwise). */
    push?: UpOptions["push"];
    /** Client connection bounds (the server's defaults otherwise). */
    connections?: UpOptions["connections"];
    /** Workspace quotas (`--quotas`); none otherwise. */
    quotas?: UpOptions["quotas"];
    /** The ACP runtimes (`--acp-runtimes`); the shipped ones otherwise. */
    acpRuntimes?: UpOptions["acpRuntimes"];
    /** The bwrap egress proxies' resolver and address policy (`UpOptions.sandboxEgress`, tests only). */
    sandboxEgress?: UpOptions["sandboxEgress"];
    /** The server's logger (silent, or AWAKEN_TEST_LOG's level, otherwise): a test reading the logs passes its own. */
    logger?: Logger;
    /** The server's clock (the system's otherwise): a test advances it past a wait instead of sleeping. */
    clock?: Clock;
  } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-test-"));
  const server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      databaseUrl: options.databaseUrl,
      streamPollMs: options.streamPollMs,
      workerPollMs: options.workerPollMs,
      workers: options.workers ?? 2,
      leaseMs: options.leaseMs ?? 5_000,
      modelIdleTimeoutMs: options.modelIdleTimeoutMs ?? 300_000,
      ssePingMs: options.ssePingMs ?? 15_000,
      apiKey: TEST_API_KEY,
      ...(options.workerToken ? { workerToken: options.workerToken } : {}),
      ...(options.allowWeakerTiers ? { allowWeakerTiers: true } : {}),
      retry: {
        baseDelayMs: options.retryBaseMs ?? 10,
        maxDelayMs: options.retryMaxMs ?? Math.max(50, options.retryBaseMs ?? 10),
      },
      // Replicas on one database must share a master key (they refuse to start otherwise), as an
      // operator's do through AWAKEN_MASTER_KEY; a test may pass its own.
      env: { ...(options.databaseUrl ? { AWAKEN_MASTER_KEY: TEST_MASTER_KEY } : {}), ...options.env },
      allowPrivateHosts: options.allowPrivateHosts,
      allowPushHosts: options.allowPushHosts,
      push: options.push,
      connections: options.connections,
      ...(options.quotas ? { quotas: options.quotas } : {}),
      ...(options.acpRuntimes ? { acpRuntimes: options.acpRuntimes } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.sandboxEgress ? { sandboxEgress: options.sandboxEgress } : {}),
    },
    options.logger ?? pino({ level: process.env.AWAKEN_TEST_LOG ?? "silent" }),
  );
  const client = new Anthropic({ baseURL: server.url, apiKey: TEST_API_KEY, maxRetries: 0 });
  return {
    server,
    client,
    dataDir,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
