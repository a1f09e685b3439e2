import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  history,
  isEndTurnIdle,
  MODEL,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50 });
});
afterAll(async () => {
  await t.close();
});

const TOOLSET = { type: "agent_toolset_20260401" as const };

async function session(
  client: Anthropic,
  options: { tier?: "none" | "bwrap"; tools?: Array<Record<string, unknown>> } = {},
) {
  const agent = await client.beta.agents.create({
    name: "hands",
    model: MODEL,
    tools: (options.tools ?? [TOOLSET]) as never,
  });
  const environment = await client.beta.environments.create({
    name: "hands",
    // Awaken extension: the isolation tier of the environment's Hand tools.
    config: { type: "cloud", sandbox: { tier: options.tier ?? "none" } } as never,
  });
  return client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

async function turn(sessionId: string, text: string): Promise<WireEvent[]> {
  const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] });
  return waitForHistory(t.client, sessionId, (h) => h.filter(isEndTurnIdle).length > before, 15_000);
}

const last = (events: WireEvent[], type: string) => events.filter((e) => e.type === type).at(-1);

describe("Hand tools run server-side in the session's sandbox (wire §3.4 case 1)", () => {
  it("bash: agent.tool_use (allowed) → agent.tool_result with the output → the model answers it", async () => {
    const s = await session(t.client);
    const events = await turn(s.id, 'call bash {"command":"echo hello from $PWD; echo oops >&2; exit 3"}');

    const use = last(events, "agent.tool_use");
    expect(use).toMatchObject({
      name: "bash",
      input: { command: expect.stringContaining("echo hello") },
      evaluated_permission: "allow",
      evaluation: { type: "always_allow" },
    });
    const result = last(events, "agent.tool_result");
    expect(result).toMatchObject({ tool_use_id: use?.id, is_error: true });
    const text = textOf(result);
    const workspace = join(t.dataDir, "workspaces", s.id);
    expect(text).toContain(`hello from ${workspace}`);
    expect(text).toContain("[stderr]\noops");
    expect(text).toContain("[exit code: 3]");
    // Then the model saw the result and answered, and the turn ended.
    const order = events.map((e) => e.type);
    expect(order.indexOf("agent.tool_result")).toBeGreaterThan(order.indexOf("agent.tool_use"));
    expect(textOf(events.filter((e) => e.type === "agent.message").at(-1))).toContain("Tool result received");
    expect(events.at(-1)?.type).toBe("session.status_idle");
    // The intent bookkeeping holds a version but is never shown on the wire.
    expect(events.some((e) => e.type.startsWith("awaken."))).toBe(false);
  });

  it("the workspace persists between calls, and read returns numbered lines of a range", async () => {
    const s = await session(t.client);
    await turn(s.id, 'call bash {"command":"printf \'one\\\\ntwo\\\\nthree\\\\n\' > notes.txt"}');
    expect(readFileSync(join(t.dataDir, "workspaces", s.id, "notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");

    const events = await turn(s.id, 'call read {"file_path":"notes.txt","offset":2,"limit":1}');
    const result = last(events, "agent.tool_result");
    expect(result?.is_error).toBe(false);
    expect(textOf(result)).toBe("     2\ttwo\n");

    const missing = last(await turn(s.id, 'call read {"file_path":"nope.txt"}'), "agent.tool_result");
    expect(missing?.is_error).toBe(true);
    expect(textOf(missing)).toMatch(/nope\.txt/);
  });

  it("a command runs with a clean environment and is killed with its children past its timeout", async () => {
    const s = await session(t.client);
    const events = await turn(
      s.id,
      'call bash {"command":"env | sort; (sleep 30; touch late.txt) & sleep 30","timeout_ms":500}',
    );
    const text = textOf(last(events, "agent.tool_result"));
    expect(text).toContain("[killed after 500 ms");
    expect(text).not.toContain("AWAKEN_");
    expect(text).toMatch(/^PATH=/m);
    // The backgrounded child died with the group: it never gets to write its file.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(t.dataDir, "workspaces", s.id, "late.txt"))).toBe(false);
  });

  it("output past the limit is cut with a marker", async () => {
    const s = await session(t.client);
    const events = await turn(s.id, 'call bash {"command":"head -c 100000 /dev/zero | tr \'\\\\0\' x"}');
    const text = textOf(last(events, "agent.tool_result"));
    expect(text).toContain("[output truncated after 30000 bytes]");
    expect(text.length).toBeLessThan(31_000);
  });

  it("a tier this worker cannot realize is refused with instructions, never swapped for another", async () => {
    const s = await session(t.client, { tier: "bwrap" });
    const events = await turn(s.id, 'call bash {"command":"echo should-not-run > ran.txt"}');
    const result = last(events, "agent.tool_result");
    expect(result?.is_error).toBe(true);
    expect(textOf(result)).toMatch(/bwrap.*install bubblewrap/s);
    expect(existsSync(join(t.dataDir, "workspaces", s.id, "ran.txt"))).toBe(false);
  });

  it("tools the policy would ask about are not offered until confirmations exist (issue 4)", async () => {
    const s = await session(t.client, {
      tools: [{ ...TOOLSET, configs: [{ name: "bash", permission_policy: { type: "always_ask" } }] }],
    });
    const events = await turn(s.id, 'call bash {"command":"echo hi"}');
    // The offline model only calls tools it was offered: bash was withheld, read was not.
    expect(events.some((e) => e.type === "agent.tool_use")).toBe(false);
    expect(textOf(last(events, "agent.message"))).toContain("You said");
  });
});
