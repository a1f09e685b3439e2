/**
 * A stdio MCP server's vault secrets against startup files planted in the session's workspace,
 * end to end: the workspace is where the agent's own Hand tools write, and it was the HOME of the
 * shell that hands the server its secrets (bwrap) and of the server itself (none). A `.bashrc`
 * redefining `exec`, a `.profile`, a `.bash_profile` and a `BASH_ENV` the worker was started with
 * must never run: the server still gets its variables, and no file of the workspace ever sees them.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { MODEL, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import {
  type StdioMcpHarness,
  startStdioMcpHarness,
  vaultHoldingNotesToken,
} from "../support/stdioMcpHarness.js";
import { plantedSecret } from "../support/vaultServer.js";

const SECRET = plantedSecret("stdio-mcp-rc");
const SECRET_SHA256 = createHash("sha256").update(SECRET).digest("hex");
const PLANTED = [".bashrc", ".profile", ".bash_profile", ".bash_env"];

let harness: StdioMcpHarness;
let fake: FakeModelServer;
let client: Anthropic;
let logs: string[];
let bodies: string[];

beforeAll(async () => {
  harness = await startStdioMcpHarness({ dataDirPrefix: "awaken-mcp-stdio-rc-", workers: 1 });
  ({ fake, client, logs, bodies } = harness);
}, 60_000);
afterAll(() => harness?.stop());

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
      const vaultId = await vaultHoldingNotesToken(client, "stdio-rc", SECRET);
      const session = await client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        vault_ids: [vaultId],
      } as never);
      const workspace = harness.placeServer(session.id);
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
