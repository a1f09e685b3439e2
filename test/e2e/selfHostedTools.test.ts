/**
 * Built-in tools in a `self_hosted` environment run on the client (wire §3.4 case 2): the server
 * commits `agent.tool_use` and parks on `requires_action`; the SDK's own session tool runner with
 * the SDK's own `agent_toolset_20260401` implementation runs each call in its workdir and posts
 * `user.tool_result`. A confirmation in between is held by the runner until it sees the echo.
 */
import * as fs from "node:fs";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { betaAgentToolset20260401 } from "@anthropic-ai/sdk/tools/agent-toolset/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  BAD_REQUEST,
  history,
  isActionIdle,
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
let workdir: string;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  fake.setFallback({ kind: "text", text: "all done" });
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
  });
  workdir = mkdtempSync(join(tmpdir(), "awaken-selfhosted-"));
});
afterAll(async () => {
  await t.close();
  await fake.close();
  rmSync(workdir, { recursive: true, force: true });
});

async function selfHostedSession(bashPolicy = "always_allow") {
  const agent = await t.client.beta.agents.create({
    name: "self-hosted",
    model: MODEL,
    tools: [
      {
        type: "agent_toolset_20260401",
        configs: [{ name: "bash", permission_policy: { type: bashPolicy } }],
      },
    ] as never,
  });
  const environment = await t.client.beta.environments.create({
    name: "mine",
    config: { type: "self_hosted" },
  });
  return t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

/** Runs the SDK's runner with the SDK's toolset until the turn ends. */
async function runTools(sessionId: string) {
  const runner = t.client.beta.sessions.events.toolRunner(sessionId, {
    tools: betaAgentToolset20260401({ workdir }),
    maxIdleMs: 300,
  });
  const calls = [];
  for await (const call of runner) calls.push(call);
  return calls;
}

const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);

describe("self_hosted: the client's worker runs built-in tools", () => {
  it("bash, write, read, edit, glob and grep run through the SDK's runner and the model reads every result", async () => {
    writeFileSync(join(workdir, "seed.txt"), "alpha\nbeta\n");
    const s = await selfHostedSession();
    fake.enqueue(
      {
        kind: "tool_use",
        name: "bash",
        input: { command: "echo from-bash > made.txt" },
        more: [{ name: "write", input: { file_path: "notes/a.md", content: "hello world\n" } }],
      },
      {
        kind: "tool_use",
        name: "read",
        input: { file_path: "seed.txt" },
        more: [
          { name: "edit", input: { file_path: "notes/a.md", old_string: "world", new_string: "awaken" } },
          { name: "glob", input: { pattern: "**/*.md" } },
          { name: "grep", input: { pattern: "beta" } },
        ],
      },
    );
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("work")] });
    await waitForHistory(t.client, s.id, (h) => h.some(isActionIdle));
    const parked = await history(t.client, s.id);
    // Allowed, but the client runs it: no server result, the run waits for user.tool_result.
    expect(ofType(parked, "agent.tool_use")[0]).toMatchObject({
      name: "bash",
      evaluated_permission: "allow",
    });
    expect(ofType(parked, "agent.tool_result")).toHaveLength(0);

    const calls = await runTools(s.id);
    const events = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(calls.map((c) => [c.name, c.posted])).toEqual([
      ["bash", true],
      ["write", true],
      ["read", true],
      ["edit", true],
      ["glob", true],
      ["grep", true],
    ]);
    const results = ofType(events, "user.tool_result");
    // The SDK's own glob uses `fs.glob`, which Node has from 22 on: on Node 20 the SDK's tool
    // reports an error, which our server records and hands the model like any result.
    const sdkGlobWorks = typeof (fs as { glob?: unknown }).glob === "function";
    expect(results.map((r) => r.is_error)).toEqual([false, false, false, false, !sdkGlobWorks, false]);
    expect(readFileSync(join(workdir, "made.txt"), "utf8")).toBe("from-bash\n");
    expect(readFileSync(join(workdir, "notes/a.md"), "utf8")).toBe("hello awaken\n");
    expect(textOf(results[2])).toContain("beta");
    if (sdkGlobWorks) expect(textOf(results[4])).toContain("a.md");
    expect(textOf(results[5])).toContain("seed.txt");
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("all done");
    // The model got the client's results as its tool results.
    const last = fake.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(last.messages.at(-1)?.content)).toContain("tool_result");
  });

  it("a confirmation first: the runner holds the call until it sees the echoed allow, then runs it", async () => {
    const s = await selfHostedSession("always_ask");
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo confirmed > confirmed.txt" } });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("work")] });
    const parked = await waitForHistory(t.client, s.id, (h) => h.some(isActionIdle));
    const use = ofType(parked, "agent.tool_use")[0]!;
    expect(use.evaluated_permission).toBe("ask");
    // A result before the confirmation is not accepted: the call is waiting for its confirmation.
    await expect(
      t.client.beta.sessions.events.send(s.id, {
        events: [{ type: "user.tool_result", tool_use_id: use.id, content: [{ type: "text", text: "x" }] }],
      }),
    ).rejects.toMatchObject({ status: BAD_REQUEST.status });

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: use.id, result: "allow" }],
    });
    const calls = await runTools(s.id);
    await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(calls.map((c) => [c.name, c.posted])).toEqual([["bash", true]]);
    expect(readFileSync(join(workdir, "confirmed.txt"), "utf8")).toBe("confirmed\n");
  });

  it("user.tool_result is refused on a cloud session and for an answered id", async () => {
    const s = await selfHostedSession();
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "true" } });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("work")] });
    const parked = await waitForHistory(t.client, s.id, (h) => h.some(isActionIdle));
    const id = ofType(parked, "agent.tool_use")[0]!.id;
    const answer = {
      events: [
        {
          type: "user.tool_result" as const,
          tool_use_id: id,
          content: [{ type: "text" as const, text: "ok" }],
        },
      ],
    };
    await t.client.beta.sessions.events.send(s.id, answer);
    await expect(t.client.beta.sessions.events.send(s.id, answer)).rejects.toMatchObject({
      status: BAD_REQUEST.status,
    });
    await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(await history(t.client, s.id), "user.tool_result")).toHaveLength(1);
  });
});
