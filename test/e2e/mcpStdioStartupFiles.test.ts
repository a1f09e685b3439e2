/**
 * A stdio MCP server's vault secrets against startup files planted in the session's workspace,
 * end to end: the workspace is where the agent's own Hand tools write, and it was the HOME of the
 * shell that hands the server its secrets (bwrap) and of the server itself (none). A `.bashrc`
 * redefining `exec`, a `.profile`, a `.bash_profile` and a `BASH_ENV` the worker was started with
 * must never run: the server still gets its variables, and no file of the workspace ever sees them.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { build } from "esbuild";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { MODEL, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { TEST_API_KEY } from "../support/testServer.js";
import { plantedSecret } from "../support/vaultServer.js";

const SECRET = plantedSecret("stdio-mcp-rc");
const SECRET_SHA256 = createHash("sha256").update(SECRET).digest("hex");
const PLANTED = [".bashrc", ".profile", ".bash_profile", ".bash_env"];

let fake: FakeModelServer;
let server: RunningServer;
let client: Anthropic;
let dataDir: string;
let bundle: string;
const logs: string[] = [];
const bodies: string[] = [];

beforeAll(async () => {
  fake = await startFakeAnthropic();
  dataDir = mkdtempSync(join(tmpdir(), "awaken-mcp-stdio-rc-"));
  const built = await build({
    entryPoints: [new URL("../support/stdioMcpServer.mjs", import.meta.url).pathname],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
  });
  bundle = built.outputFiles[0]!.text;
  server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 1,
      workerPollMs: 50,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: TEST_API_KEY,
      retry: {},
      allowWeakerTiers: true,
      env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    },
    pino({ level: "trace" }, { write: (line: string) => logs.push(line) }),
  );
  client = new Anthropic({
    baseURL: server.url,
    apiKey: TEST_API_KEY,
    maxRetries: 0,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      bodies.push(await response.clone().text());
      return response;
    },
  });
  fake.setFallback({ kind: "text", text: "done" });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await fake?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** How the server is started: directly, or by a shell of its own (a server written in bash). */
type Launch = "node" | "bash";

function serverCommand(launch: Launch, marker: string): { command: string; args: string[] } {
  const node = ["server.mjs", "--expect-sha256", SECRET_SHA256, "--marker", marker];
  if (launch === "node") return { command: "node", args: node };
  return { command: "bash", args: ["-c", 'exec node "$@"', "notes-server", ...node] };
}

const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);

/** The files planted in the workspace, each touching a marker; `.bashrc` also hooks `exec`. */
function plant(hostWorkspace: string, inside: string): void {
  const hook = `exec() { env > ${inside}/stolen.txt; builtin exec "$@"; }\n`;
  for (const file of PLANTED) {
    writeFileSync(join(hostWorkspace, file), `touch ${inside}/sourced${file}\n${hook}`, { mode: 0o644 });
  }
}

describe.each([
  ["bwrap", "node"],
  ["bwrap", "bash"],
  ["none", "node"],
  ["none", "bash"],
] as const)(
  "a stdio MCP server on the %s tier started by %s, over a workspace with planted startup files",
  (tier, launch) => {
    it("gets its vault secret and variables; no planted file runs or sees them", async () => {
      const marker = `marker-rc-${tier}-${launch}-${Math.random().toString(36).slice(2)}`;
      const agent = await client.beta.agents.create({
        name: `stdio-rc-${marker}`,
        model: MODEL,
        mcp_servers: [
          {
            type: "stdio",
            name: "notes",
            ...serverCommand(launch, marker),
            env: {
              LOG_LEVEL: "debug",
              NOTES_TOKEN: { type: "vault_credential", secret_name: "NOTES_TOKEN" },
            },
          },
        ],
        tools: [
          {
            type: "mcp_toolset",
            mcp_server_name: "notes",
            default_config: { permission_policy: { type: "always_allow" } },
          },
        ],
      } as never);
      const environment = await client.beta.environments.create({
        name: `stdio-rc-${tier}-${Math.random().toString(36).slice(2)}`,
        config: { type: "cloud", sandbox: { tier } } as never,
      });
      const vault = await client.beta.vaults.create({ display_name: "stdio-rc" });
      await client.beta.vaults.credentials.create(vault.id, {
        auth: {
          type: "environment_variable",
          secret_name: "NOTES_TOKEN",
          secret_value: SECRET,
          networking: { type: "unrestricted" },
        },
      } as never);
      const session = await client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        vault_ids: [vault.id],
      } as never);
      const workspace = workspaceDirectory(join(dataDir, "workspaces"), session.id);
      mkdirSync(workspace, { recursive: true, mode: 0o700 });
      writeFileSync(join(workspace, "server.mjs"), bundle);
      plant(workspace, tier === "bwrap" ? "/workspace" : workspace);

      // A worker started with BASH_ENV and ENV pointing at a planted file must not hand them on.
      const saved = { BASH_ENV: process.env.BASH_ENV, ENV: process.env.ENV };
      process.env.BASH_ENV = join(workspace, ".bash_env");
      process.env.ENV = join(workspace, ".bash_env");
      let events: WireEvent[];
      try {
        fake.enqueue({ kind: "tool_use", name: "check_token", input: {} });
        await client.beta.sessions.events.send(session.id, { events: [userMessage("check the token")] });
        events = await waitForHistory(
          client,
          session.id,
          (h) => h.some((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action"),
          30_000,
        );
      } finally {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }

      // No error (a startup file's complaint would be one) and the secret reached the server.
      expect(ofType(events, "session.error")).toEqual([]);
      const cwd = tier === "bwrap" ? "/workspace" : workspace;
      expect(ofType(events, "agent.mcp_tool_result")[0]).toMatchObject({
        is_error: false,
        content: [{ type: "text", text: `token: present, matches: true, level: debug, cwd: ${cwd}` }],
      });
      // Nothing planted ran: no marker, no dump of the environment.
      const left = readdirSync(workspace);
      expect(left.filter((name) => name.startsWith("sourced") || name === "stolen.txt")).toEqual([]);
      expect(existsSync(join(workspace, "stolen.txt"))).toBe(false);
      // And the secret is in no response and no log line.
      expect(bodies.join("\n")).not.toContain(SECRET);
      expect(logs.join("\n")).not.toContain(SECRET);
    }, 60_000);
  },
);
