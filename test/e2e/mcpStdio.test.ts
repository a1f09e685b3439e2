/**
 * Stdio MCP servers run in the session's sandbox, end to end through the official SDK over real
 * HTTP, with a scripted model: a server made with the official MCP SDK (stdioMcpServer.mjs,
 * bundled into the session's workspace, as the sandbox sees no node_modules) is started on the
 * session's tier (bwrap, and none), its tool is called through the same permission gate as any
 * MCP tool, a vault `environment_variable` secret reaches its environment (the tool says whether
 * it matches a hash, never the value) and appears in no event, row, log line or error, and the
 * process is gone once the run slice ends.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  BAD_REQUEST,
  expectApiError,
  isActionIdle,
  MODEL,
  stopReason,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import {
  type StdioMcpHarness,
  startStdioMcpHarness,
  vaultHoldingNotesToken,
} from "../support/stdioMcpHarness.js";
import { plantedSecret } from "../support/vaultServer.js";

const SECRET = plantedSecret("stdio-mcp");
const SECRET_SHA256 = createHash("sha256").update(SECRET).digest("hex");

let harness: StdioMcpHarness;
let fake: FakeModelServer;
let client: Anthropic;
let dataDir: string;
let logs: string[];
let bodies: string[];

beforeAll(async () => {
  harness = await startStdioMcpHarness({ dataDirPrefix: "awaken-mcp-stdio-", workers: 2 });
  ({ fake, client, dataDir, logs, bodies } = harness);
}, 60_000);
afterAll(() => harness?.stop());

type Policy = { type: "always_allow" | "always_ask" };

/** Each agent's server carries a marker of its own on its command line, to find it in /proc. */
function stdioAgent(marker: string, policy: Policy, env: Record<string, unknown> = {}) {
  return client.beta.agents.create({
    name: `stdio-${marker}`,
    model: MODEL,
    mcp_servers: [
      {
        type: "stdio",
        name: "notes",
        command: "node",
        args: ["server.mjs", "--expect-sha256", SECRET_SHA256, "--marker", marker],
        env: {
          LOG_LEVEL: "debug",
          NOTES_TOKEN: { type: "vault_credential", secret_name: "NOTES_TOKEN" },
          ...env,
        },
      },
    ],
    tools: [{ type: "mcp_toolset", mcp_server_name: "notes", default_config: { permission_policy: policy } }],
  } as never);
}

async function sessionOn(tier: "bwrap" | "none", agentId: string, withVault = true) {
  const environment = await client.beta.environments.create({
    name: `stdio-${tier}-${Math.random().toString(36).slice(2)}`,
    config: { type: "cloud", sandbox: { tier } } as never,
  });
  const vaultIds = withVault ? [await vaultHoldingNotesToken(client, "stdio", SECRET)] : [];
  const session = await client.beta.sessions.create({
    agent: agentId,
    environment_id: environment.id,
    ...(vaultIds.length > 0 ? { vault_ids: vaultIds } : {}),
  } as never);
  harness.placeServer(session.id);
  return session;
}

const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);
const endTurns = (events: WireEvent[]) =>
  events.filter((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");

/** Host processes whose command line names `marker` (the sandbox's are visible from the host). */
function processesNaming(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline.replaceAll("\0", " ").slice(0, 200)}`);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

async function gone(marker: string): Promise<string[]> {
  for (let i = 0; i < 40 && processesNaming(marker).length > 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return processesNaming(marker);
}

/** Every row of every table, as text (to search for the secret). */
function everyRow(): string {
  const db = new SqliteDatabase(join(dataDir, "awaken.db"), { readonly: true });
  try {
    const tables = db.prepare("select name from sqlite_master where type = 'table'").all() as Array<{
      name: string;
    }>;
    return tables.map(({ name }) => JSON.stringify(db.prepare(`select * from "${name}"`).all())).join("\n");
  } finally {
    db.close();
  }
}

function opens(sessionId: string) {
  const db = new SqliteDatabase(join(dataDir, "awaken.db"), { readonly: true });
  try {
    return db
      .prepare("select holder, outcome from credential_opens where session_id = ? order by created_at, id")
      .all(sessionId) as Array<{ holder: string; outcome: string }>;
  } finally {
    db.close();
  }
}

function expectNoSecretAnywhere(): void {
  expect(everyRow()).not.toContain(SECRET);
  expect(logs.join("\n")).not.toContain(SECRET);
  expect(bodies.join("\n")).not.toContain(SECRET);
  expect(JSON.stringify(fake.requests)).not.toContain(SECRET);
}

describe.each(["bwrap", "none"] as const)("a stdio MCP server on the %s tier", (tier) => {
  it("runs in the session's sandbox, gets its vault secret, answers the call, and is gone after the run", async () => {
    const marker = `marker-${tier}-${Math.random().toString(36).slice(2)}`;
    const agent = await stdioAgent(marker, { type: "always_allow" });
    const session = await sessionOn(tier, agent.id);
    fake.enqueue({ kind: "tool_use", name: "check_token", input: {} });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("check the token")] });
    const events = await waitForHistory(client, session.id, (h) => endTurns(h).length > 0, 30_000);

    expect(ofType(events, "session.error")).toEqual([]);
    const use = ofType(events, "agent.mcp_tool_use")[0];
    expect(use).toMatchObject({
      name: "check_token",
      mcp_server_name: "notes",
      evaluated_permission: "allow",
    });
    const result = ofType(events, "agent.mcp_tool_result")[0];
    expect(result).toMatchObject({ mcp_tool_use_id: use!.id, is_error: false });
    // The secret reached the process; its plain variable too; it ran in the session's workspace.
    const cwd = tier === "bwrap" ? "/workspace" : workspaceDirectory(join(dataDir, "workspaces"), session.id);
    expect(result!.content).toEqual([
      { type: "text", text: `token: present, matches: true, level: debug, cwd: ${cwd}` },
    ]);
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });
    // The model was offered the server's tools under their own names.
    const offered =
      (fake.requests.at(-2)?.body as { tools?: Array<{ name: string }> } | undefined)?.tools ?? [];
    expect(offered.map((t) => t.name)).toEqual(expect.arrayContaining(["check_token", "note"]));
    // The open was admitted and audited for the process holder, once.
    expect(opens(session.id)).toEqual([{ holder: "mcp_process", outcome: "opened" }]);
    // The run slice is over: so is the server's process (and its sandbox's tree).
    expect(await gone(marker)).toEqual([]);
    // The server printed its environment on stderr: that never reached a log, row or response.
    expectNoSecretAnywhere();
  }, 60_000);
});

describe("stdio MCP servers and the permission gate", () => {
  it("an always_ask policy parks the call until it is confirmed; the confirmed call runs", async () => {
    const marker = `marker-ask-${Math.random().toString(36).slice(2)}`;
    const agent = await stdioAgent(marker, { type: "always_ask" });
    const session = await sessionOn("bwrap", agent.id);
    fake.enqueue({ kind: "tool_use", name: "note", input: { text: "remember me" } });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("take a note")] });
    const parked = await waitForHistory(client, session.id, (h) => h.some(isActionIdle), 30_000);
    const use = ofType(parked, "agent.mcp_tool_use")[0]!;
    expect(use).toMatchObject({ name: "note", evaluated_permission: "ask" });
    expect(ofType(parked, "agent.mcp_tool_result")).toEqual([]);
    expect(stopReason(parked.at(-1))).toEqual({ type: "requires_action", event_ids: [use.id] });
    // Parked: the slice that connected the server ended, and its process with it.
    expect(await gone(marker)).toEqual([]);

    await client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: use.id, result: "allow" }] as never,
    });
    const after = await waitForHistory(client, session.id, (h) => endTurns(h).length > 0, 30_000);
    expect(ofType(after, "agent.mcp_tool_result")[0]).toMatchObject({
      mcp_tool_use_id: use.id,
      is_error: false,
      content: [{ type: "text", text: "noted: remember me" }],
    });
    expect(await gone(marker)).toEqual([]);
    expectNoSecretAnywhere();
  }, 60_000);

  it("a vault secret the session did not pin ends the turn cleanly, naming the server and the secret", async () => {
    const marker = `marker-unpinned-${Math.random().toString(36).slice(2)}`;
    const agent = await stdioAgent(marker, { type: "always_allow" });
    const session = await sessionOn("none", agent.id, false);
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    const events = await waitForHistory(client, session.id, (h) => endTurns(h).length > 0, 30_000);
    const error = ofType(events, "session.error")[0]?.error as Record<string, unknown>;
    expect(error).toMatchObject({ type: "mcp_authentication_failed_error", mcp_server_name: "notes" });
    expect(String(error.message)).toContain("NOTES_TOKEN");
    expect(stopReason(events.at(-1))).toEqual({ type: "retries_exhausted" });
    expect(processesNaming(marker)).toEqual([]);
  }, 60_000);

  it("a server that exits at once fails the connection with its scrubbed stderr, never the secret", async () => {
    const marker = `marker-exit-${Math.random().toString(36).slice(2)}`;
    const agent = await client.beta.agents.create({
      name: "stdio-exits",
      model: MODEL,
      mcp_servers: [
        {
          type: "stdio",
          name: "broken",
          command: "bash",
          args: ["-c", 'echo "leaking $NOTES_TOKEN" >&2; exit 3', marker],
          env: { NOTES_TOKEN: { type: "vault_credential", secret_name: "NOTES_TOKEN" } },
        },
      ],
      tools: [{ type: "mcp_toolset", mcp_server_name: "broken" }],
    } as never);
    const session = await sessionOn("bwrap", agent.id);
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    const events = await waitForHistory(client, session.id, (h) => endTurns(h).length > 0, 30_000);
    const error = ofType(events, "session.error")[0]?.error as Record<string, unknown>;
    expect(error).toMatchObject({ type: "mcp_connection_failed_error", mcp_server_name: "broken" });
    expect(String(error.message)).toContain("leaking [redacted]");
    expectNoSecretAnywhere();
  }, 60_000);
});

describe("stdio MCP server declarations are validated at create and update", () => {
  const base = { name: "bad-stdio", model: MODEL };
  const toolset = (name = "s") => [{ type: "mcp_toolset", mcp_server_name: name }];
  const create = (server: Record<string, unknown>) =>
    client.beta.agents.create({ ...base, mcp_servers: [server], tools: toolset() } as never);

  it.each([
    [{ type: "stdio", name: "s", command: "" }, "mcp_servers[0].command: must not be empty"],
    [{ type: "stdio", name: "s", command: "--help" }, "mcp_servers[0].command: must be a program name"],
    [{ type: "stdio", name: "s", command: "node", args: ["ok", 3] }, "mcp_servers[0].args[1]"],
    [{ type: "stdio", name: "s", command: "node", args: "server.mjs" }, "mcp_servers[0].args"],
    [{ type: "stdio", name: "s", command: "node", env: { "BAD-NAME": "x" } }, "mcp_servers[0].env"],
    [{ type: "stdio", name: "s", command: "node", env: { LD_PRELOAD: "x.so" } }, "LD_* variables"],
    [
      { type: "stdio", name: "s", command: "node", env: { A: { type: "vault_credential" } } },
      "mcp_servers[0].env.A",
    ],
    [{ type: "stdio", name: "s", command: "a\u0000b" }, "NUL"],
    [
      { type: "url", name: "s", url: "https://mcp.example.com/mcp", command: "node" },
      "mcp_servers[0]: a server has either a url",
    ],
    [{ type: "stdio", name: "s", url: "https://mcp.example.com/mcp", command: "node" }, "not both"],
    [{ type: "pipe", name: "s", command: "node" }, "mcp_servers[0].type: unknown MCP server type"],
  ])("%j is refused", async (server, message) => {
    await expectApiError(create(server), Anthropic.BadRequestError, { ...BAD_REQUEST, message: [message] });
  });

  it("an update is checked the same way, and a valid declaration is echoed in its stored form", async () => {
    const agent = await client.beta.agents.create({
      ...base,
      mcp_servers: [{ type: "stdio", name: "s", command: "node" }],
      tools: toolset(),
    } as never);
    expect(agent.mcp_servers).toEqual([{ type: "stdio", name: "s", command: "node", args: [], env: {} }]);
    await expectApiError(
      client.beta.agents.update(agent.id, {
        version: agent.version,
        mcp_servers: [{ type: "stdio", name: "s", command: " node" }],
      } as never),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["mcp_servers[0].command: must not start or end with whitespace"] },
    );
  });
});
