/**
 * What the stdio MCP end-to-end tests share: the test server (stdioMcpServer.mjs) bundled for the
 * sandbox and put into a session's workspace, the vault secret it checks, and a server to run it on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type Anthropic from "@anthropic-ai/sdk";
import { build } from "esbuild";
import { pino } from "pino";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import { startFakeAnthropic } from "./fakeAnthropicServer.js";
import type { FakeModelServer } from "./fakeModelScript.js";
import { TEST_API_KEY } from "./testServer.js";
import { recordingClient } from "./vaultServer.js";

/** stdioMcpServer.mjs with its MCP SDK as one ESM file: the sandbox sees no node_modules. */
export async function bundleStdioMcpServer(): Promise<string> {
  const built = await build({
    entryPoints: [fileURLToPath(new URL("./stdioMcpServer.mjs", import.meta.url))],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
  });
  return built.outputFiles[0]!.text;
}

/**
 * Writes the bundle as `server.mjs` into the session's workspace before anything runs there (a root
 * worker hands the workspace to the sandbox's uid when it realizes it); returns the host path.
 */
export function placeStdioMcpServer(dataDir: string, sessionId: string, bundle: string): string {
  const workspace = workspaceDirectory(join(dataDir, "workspaces"), sessionId);
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  writeFileSync(join(workspace, "server.mjs"), bundle);
  return workspace;
}

/** A vault whose `environment_variable` credential is the NOTES_TOKEN the server's `check_token` checks. */
export async function vaultHoldingNotesToken(
  client: Anthropic,
  displayName: string,
  secret: string,
): Promise<string> {
  const vault = await client.beta.vaults.create({ display_name: displayName });
  await client.beta.vaults.credentials.create(vault.id, {
    auth: {
      type: "environment_variable",
      secret_name: "NOTES_TOKEN",
      secret_value: secret,
      networking: { type: "unrestricted" },
    },
  } as never);
  return vault.id;
}

export interface StdioMcpHarness {
  /** The fake model; its fallback reply is the text "done". */
  fake: FakeModelServer;
  server: RunningServer;
  /** An SDK client of `server` that records every response body in `bodies`. */
  client: Anthropic;
  dataDir: string;
  /** Puts the bundled stdio MCP server into the session's workspace; returns its host path. */
  placeServer(sessionId: string): string;
  /** Every line the server logged (level trace). */
  logs: string[];
  bodies: string[];
  stop(): Promise<void>;
}

/**
 * The all-in-one server in this process on a fake Anthropic model, with tier "none" allowed, its log
 * and every response body captured so a test can search them for a planted secret.
 */
export async function startStdioMcpHarness(options: {
  /** The scratch data dir's name prefix under the system's temporary folder. */
  dataDirPrefix: string;
  workers: number;
}): Promise<StdioMcpHarness> {
  const bundle = await bundleStdioMcpServer();
  const fake = await startFakeAnthropic();
  const dataDir = mkdtempSync(join(tmpdir(), options.dataDirPrefix));
  const logs: string[] = [];
  const bodies: string[] = [];
  let server: RunningServer;
  try {
    server = await startAllInOne(
      {
        host: "127.0.0.1",
        port: 0,
        dataDir,
        workers: options.workers,
        workerPollMs: 50,
        leaseMs: 5_000,
        modelIdleTimeoutMs: 300_000,
        ssePingMs: 15_000,
        apiKey: TEST_API_KEY,
        retry: {},
        // Environments on tier "none" are among the cases: the operator option enables them.
        allowWeakerTiers: true,
        env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
      },
      pino({ level: "trace" }, { write: (line: string) => logs.push(line) }),
    );
  } catch (error) {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const client = recordingClient(server.url, bodies);
  fake.setFallback({ kind: "text", text: "done" });
  return {
    fake,
    server,
    client,
    dataDir,
    placeServer: (sessionId) => placeStdioMcpServer(dataDir, sessionId, bundle),
    logs,
    bodies,
    stop: async () => {
      try {
        await server.stop();
      } finally {
        await fake.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
