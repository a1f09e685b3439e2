/**
 * When the sandbox begins (`config.sandbox.provisioning`, frozen with the environment
 * revision a session pins), admission for `on_tool_use`, the workspace living as long as its
 * session, and escape attempts from bash in the real `bwrap` tier, all through the official SDK with
 * a scripted model on the real Anthropic streaming wire.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  BAD_REQUEST,
  history,
  isEndTurnIdle,
  MODEL,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;
let loopback: Server;
let loopbackPort: number;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    // Its environments run tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
  });
  // The data dir stays 0700 as mkdtemp made it: bwrap sandboxes reach their workspaces all the same.
  // A service on host loopback (think: the database) that no sandbox may reach.
  loopback = createServer((socket) => socket.end("secret-service\n"));
  await new Promise<void>((resolve) => loopback.listen(0, "127.0.0.1", resolve));
  loopbackPort = (loopback.address() as { port: number }).port;
});
afterAll(async () => {
  await t.close();
  await fake.close();
  await new Promise((resolve) => loopback.close(resolve));
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "ok" });
});

type Sandbox = { tier?: "none" | "bwrap"; provisioning?: "eager" | "on_tool_use" };

async function environment(sandbox: Sandbox) {
  return t.client.beta.environments.create({ name: "sbx", config: { type: "cloud", sandbox } as never });
}

async function session(sandbox: Sandbox) {
  const agent = await t.client.beta.agents.create({
    name: "sbx",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }],
  });
  const env = await environment(sandbox);
  return t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
}

async function turn(sessionId: string): Promise<WireEvent[]> {
  const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage("go")] });
  return waitForHistory(t.client, sessionId, (h) => h.filter(isEndTurnIdle).length > before, 20_000);
}

/** Internal facts are not on the wire: read them from the database. */
function internalFacts(
  sessionId: string,
  type: string,
): Array<{ seq: number; body: Record<string, unknown> }> {
  const db = new Database(join(t.dataDir, "awaken.db"), { readonly: true });
  try {
    const rows = db
      .prepare("select seq, body_json from events where session_id = ? and type = ? order by seq")
      .all(sessionId, type) as Array<{ seq: number; body_json: string }>;
    return rows.map((r) => ({ seq: r.seq, body: JSON.parse(r.body_json) as Record<string, unknown> }));
  } finally {
    db.close();
  }
}

function seqOf(sessionId: string, type: string): number[] {
  const db = new Database(join(t.dataDir, "awaken.db"), { readonly: true });
  try {
    return (
      db
        .prepare("select seq from events where session_id = ? and type = ? order by seq")
        .all(sessionId, type) as Array<{
        seq: number;
      }>
    ).map((r) => r.seq);
  } finally {
    db.close();
  }
}

const workspace = (sessionId: string) => join(t.dataDir, "workspaces", sessionId);
const results = (events: WireEvent[]) => events.filter((e) => e.type === "agent.tool_result");

describe("sandbox provisioning", () => {
  it("on_tool_use: a model-only turn creates no sandbox; a tool turn creates exactly one", async () => {
    const s = await session({ tier: "none" });
    await turn(s.id);
    expect(existsSync(workspace(s.id))).toBe(false);
    expect(internalFacts(s.id, "awaken.sandbox_realized")).toEqual([]);

    fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: { command: "echo one > a.txt" },
      more: [{ name: "bash", input: { command: "cat a.txt" } }],
    });
    await turn(s.id);
    fake.enqueue({ kind: "tool_use", name: "read", input: { file_path: "a.txt" } });
    const events = await turn(s.id);
    expect(results(events).map((r) => r.is_error)).toEqual([false, false, false]);
    const realized = internalFacts(s.id, "awaken.sandbox_realized");
    expect(realized).toHaveLength(1);
    expect(realized[0]?.body).toMatchObject({ tier: "none", provisioning: "on_tool_use" });
    expect(typeof realized[0]?.body.realize_ms).toBe("number");
    // Realized for the first tool, committed with its result (after the tool's intent).
    expect(realized[0]!.seq).toBeGreaterThan(seqOf(s.id, "awaken.tool_execution")[0]!);
  });

  it("eager: the sandbox is realized before the model is first asked, even for a model-only turn", async () => {
    const s = await session({ tier: "none", provisioning: "eager" });
    await turn(s.id);
    expect(existsSync(workspace(s.id))).toBe(true);
    const realized = internalFacts(s.id, "awaken.sandbox_realized");
    expect(realized).toHaveLength(1);
    expect(realized[0]?.body).toMatchObject({ provisioning: "eager" });
    expect(realized[0]!.seq).toBeLessThan(seqOf(s.id, "span.model_request_start")[0]!);
    // A second turn finds it: still one.
    await turn(s.id);
    expect(internalFacts(s.id, "awaken.sandbox_realized")).toHaveLength(1);
  });

  it("admission: on_tool_use refuses agents that need the sandbox before the first tool; eager takes them", async () => {
    const lazy = await environment({ tier: "none", provisioning: "on_tool_use" });
    const eager = await environment({ tier: "none", provisioning: "eager" });
    const withSkills = await t.client.beta.agents.create({
      name: "skilled",
      model: MODEL,
      skills: [{ type: "anthropic", skill_id: "xlsx" }],
    });
    await expect(
      t.client.beta.sessions.create({ agent: withSkills.id, environment_id: lazy.id }),
    ).rejects.toMatchObject({
      status: BAD_REQUEST.status,
      message: expect.stringMatching(/on_tool_use.*skills.*provisioning to .{0,2}eager/s),
    });
    const ok = await t.client.beta.sessions.create({ agent: withSkills.id, environment_id: eager.id });
    expect(ok.status).toBe("idle");
  });

  it("deleting the session deletes its workspace", async () => {
    const s = await session({ tier: "none" });
    fake.enqueue({ kind: "tool_use", name: "write", input: { file_path: "keep.txt", content: "x" } });
    await turn(s.id);
    expect(existsSync(join(workspace(s.id), "keep.txt"))).toBe(true);
    await t.client.beta.sessions.delete(s.id);
    expect(existsSync(workspace(s.id))).toBe(false);
  });
});

describe("escape attempts from bash in the bwrap tier are refused and reported as tool errors", () => {
  async function attempt(command: string, extra: Record<string, unknown> = {}): Promise<WireEvent> {
    const s = await session({ tier: "bwrap" });
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command, ...extra } });
    const events = await turn(s.id);
    const [result] = results(events);
    expect(result).toBeDefined();
    return result!;
  }

  it("reading /etc/shadow", async () => {
    const result = await attempt("cat /etc/shadow");
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toMatch(/No such file|Permission denied/);
  });

  it("writing outside the workspace", async () => {
    const result = await attempt("echo x > /usr/escape.txt || echo x > /etc/escape.txt");
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toMatch(/Read-only file system|Permission denied/);
    expect(existsSync("/usr/escape.txt") || existsSync("/etc/escape.txt")).toBe(false);
  });

  it("reaching a port on host loopback", async () => {
    const result = await attempt(`exec 3<>/dev/tcp/127.0.0.1/${loopbackPort} && cat <&3`);
    expect(result.is_error).toBe(true);
    expect(textOf(result)).not.toContain("secret-service");
  });

  it("a fork bomb is bounded by the process limit, killed at its timeout, and the sandbox still works", async () => {
    const s = await session({ tier: "bwrap" });
    fake.enqueue(
      {
        kind: "tool_use",
        name: "bash",
        input: { command: "bomb() { bomb | bomb & }; bomb; sleep 30", timeout_ms: 3_000 },
      },
      { kind: "text", text: "next" },
    );
    const events = await turn(s.id);
    const [bomb] = results(events);
    expect(bomb?.is_error).toBe(true);
    expect(textOf(bomb)).toMatch(/Resource temporarily unavailable|fork: retry/);
    expect(textOf(bomb)).toContain("[killed after 3000 ms");
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo still-here" } });
    const after = results(await turn(s.id));
    expect(after.at(-1)?.is_error).toBe(false);
    expect(textOf(after.at(-1))).toContain("still-here");
  });

  it("a runaway loop is killed at its timeout", async () => {
    const result = await attempt("while :; do :; done", { timeout_ms: 1_000 });
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toContain("[killed after 1000 ms");
  });

  it("huge output is cut with a marker", async () => {
    const result = await attempt("yes awaken | head -c 5000000");
    expect(textOf(result)).toContain("[output truncated after 30000 bytes]");
    expect(textOf(result).length).toBeLessThan(31_000);
  });
});
