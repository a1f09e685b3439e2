/**
 * An ACP harness as an agent's Brain, end to end through the official Anthropic SDK over real HTTP:
 * a harness built with the ACP SDK (test/support/acp/fakeHarness.mjs), packed as an npm package and
 * installed from a loopback registry as the environment's package, launched inside a real bwrap
 * sandbox. Its text, its own tool calls through the permission gate (allowed by policy; asked, then
 * allowed and denied; the decisions posted as Managed confirmations), its file requests confined to
 * the workspace, a crash mid-turn, a launch that fails, and an interrupt.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import { HARNESS_PACKAGE, serveHarnessPackage, startHarnessServer } from "../support/acp/harnessPackage.js";
import { aiSdkChat, partsOf } from "../support/aiSdkChat.js";
import { AI_SDK_CLIENTS } from "../support/aiSdkClients.js";
import type { FakeNpmRegistry } from "../support/fakeNpmRegistry.js";
import {
  isActionIdle,
  isEndTurnIdle,
  stopReason,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { TEST_API_KEY, type TestServer } from "../support/testServer.js";

const PACKAGE = HARNESS_PACKAGE;
const TURN_MS = 60_000;

let scratch: string;
let registry: FakeNpmRegistry;
let runtimesFile: string;
let t: TestServer;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "awaken-acp-brain-"));
  ({ registry, runtimesFile } = await serveHarnessPackage(scratch));
  t = await startHarnessServer(runtimesFile, registry.url);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await registry?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function environment(packages = [`${PACKAGE}@1.0.0`]) {
  return t.client.beta.environments.create({
    name: "acp",
    config: {
      type: "cloud",
      packages: { type: "packages", npm: packages },
      sandbox: { provisioning: "eager" },
    } as never,
  });
}

/** An agent on the harness whose edits are asked and everything else allowed. */
async function agent(runtime = "fake") {
  return t.client.beta.agents.create({
    name: `acp-${runtime}`,
    model: `acp:${runtime}`,
    tools: [
      {
        type: "agent_toolset_20260401",
        default_config: { permission_policy: { type: "always_allow" } },
        configs: [{ name: "edit", permission_policy: { type: "always_ask" } }],
      },
    ],
  });
}

async function session(runtime = "fake", packages?: string[]) {
  const [a, e] = await Promise.all([agent(runtime), environment(packages)]);
  return t.client.beta.sessions.create({ agent: a.id, environment_id: e.id });
}

const send = (id: string, text: string) =>
  t.client.beta.sessions.events.send(id, { events: [userMessage(text)] });
const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);
const endTurns = (n: number) => (events: WireEvent[]) => events.filter(isEndTurnIdle).length >= n;
/** The harness's launch stages, from the session's committed history (an Awaken read route). */
async function harness(sessionId: string): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${t.server.url}/v1/awaken/sessions/${sessionId}/harness`, {
    headers: { "x-api-key": TEST_API_KEY },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Array<Record<string, unknown>> }).data;
}
const stages = async (sessionId: string) => (await harness(sessionId)).map((e) => e.stage as string);

describe("an ACP harness as the Brain", { timeout: 180_000 }, () => {
  it("launches in the sandbox through its stages, answers text, and keeps its session across turns", async () => {
    const s = await session();
    await send(s.id, "say hello from the harness");
    let events = await waitForHistory(t.client, s.id, endTurns(1), TURN_MS);
    expect(await stages(s.id)).toEqual(["installing", "launching", "initializing", "ready"]);
    expect((await harness(s.id))[3]).toMatchObject({ runtime: "fake", loaded: false });
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("hello from the harness");

    await send(s.id, "say second turn");
    events = await waitForHistory(t.client, s.id, endTurns(2), TURN_MS);
    // The same harness answered: no second launch.
    expect(await stages(s.id)).toEqual(["installing", "launching", "initializing", "ready"]);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("second turn");
    // The harness ran as the sandbox's user in its workspace: its own record is there.
    const workspace = workspaceDirectory(join(t.dataDir, "workspaces"), s.id);
    expect(existsSync(join(workspace, ".fake-harness"))).toBe(true);
  });

  it("counts the tokens a harness reports for its prompt as the session's usage", async () => {
    const s = await session();
    await send(s.id, "tokens 120 30\nsay counted");
    const events = await waitForHistory(t.client, s.id, endTurns(1), TURN_MS);
    const ends = ofType(events, "span.model_request_end");
    expect(ends.map((e) => e.model_usage)).toEqual([
      { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ]);
    const usage = (await t.client.beta.sessions.retrieve(s.id)).usage;
    expect(usage).toMatchObject({ input_tokens: 120, output_tokens: 30 });
  });

  it("runs a call the policy allows, and parks on one it asks about until a confirmation (allow, then deny)", async () => {
    const s = await session();
    const workspace = workspaceDirectory(join(t.dataDir, "workspaces"), s.id);
    await send(
      s.id,
      [
        'tool execute listing {"command":"ls","args":["-a"]}',
        `tool edit note {"path":"${"/workspace"}/note.txt","content":"written by the harness"}`,
        "say edited",
      ].join("\n"),
    );
    let events = await waitForHistory(t.client, s.id, (e) => e.some(isActionIdle), TURN_MS);
    const uses = ofType(events, "agent.tool_use");
    expect(uses.map((u) => [u.name, u.evaluated_permission, u.awaken_harness])).toEqual([
      ["bash", "allow", true],
      ["edit", "ask", true],
    ]);
    // The allowed call ran and its result is committed before the ask.
    const results = ofType(events, "agent.tool_result");
    expect(results).toEqual([expect.objectContaining({ tool_use_id: uses[0]?.id, is_error: false })]);
    const idle = events.filter(isActionIdle).at(-1);
    expect(stopReason(idle)?.event_ids).toEqual([uses[1]?.id]);
    expect(existsSync(join(workspace, "note.txt"))).toBe(false);

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: uses[1]?.id as string, result: "allow" }],
    });
    events = await waitForHistory(t.client, s.id, endTurns(1), TURN_MS);
    expect(readFileSync(join(workspace, "note.txt"), "utf8")).toBe("written by the harness");
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("edited");
    // Still one launch: the parked harness waited on this worker for the decision.
    expect((await stages(s.id)).filter((stage) => stage === "ready")).toHaveLength(1);

    await send(s.id, `tool edit again {"path":"/workspace/denied.txt","content":"no"}\nsay after the denial`);
    events = await waitForHistory(t.client, s.id, (e) => e.filter(isActionIdle).length >= 2, TURN_MS);
    const asked = ofType(events, "agent.tool_use").at(-1);
    await t.client.beta.sessions.events.send(s.id, {
      events: [
        {
          type: "user.tool_confirmation",
          tool_use_id: asked?.id as string,
          result: "deny",
          deny_message: "not that",
        },
      ],
    });
    events = await waitForHistory(t.client, s.id, endTurns(2), TURN_MS);
    expect(existsSync(join(workspace, "denied.txt"))).toBe(false);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("after the denial");
    // One result for the denied call: the denial committed with the confirmation, never a second.
    const denial = ofType(events, "agent.tool_result").filter((r) => r.tool_use_id === asked?.id);
    expect(denial).toMatchObject([{ is_error: true }]);
    expect(textOf(denial[0])).toContain("not that");
  });

  it.each(AI_SDK_CLIENTS)(
    "a harness's ask answered over the AI SDK ($label): denied, the harness goes on",
    async ({ ai }) => {
      const [a, e] = await Promise.all([agent(), environment()]);
      const h = aiSdkChat({
        ai,
        baseUrl: t.server.url,
        apiKey: TEST_API_KEY,
        id: `chat-${randomUUID()}`,
        body: { agentId: a.id, environmentId: e.id },
        sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
      });
      await h.chat.sendMessage({
        text: 'tool edit chat-note {"path":"/workspace/chat.txt","content":"no"}\nsay the chat denied it',
      });
      await h.waitForFinishes(1, TURN_MS);
      expect(h.errors).toEqual([]);
      const asked = h.chat.messages.at(-1)?.parts.find((p) => p.type === "tool-edit") as
        | { state: string; approval: { id: string } }
        | undefined;
      expect(asked?.state).toBe("approval-requested");
      await h.chat.addToolApprovalResponse({ id: asked!.approval.id, approved: false });
      await h.waitForFinishes(2, TURN_MS);
      expect(h.errors).toEqual([]);
      expect(JSON.stringify(partsOf(h.chat.messages.at(-1)))).toContain("the chat denied it");
      const sessionId = h.sessionId()!;
      const workspace = workspaceDirectory(join(t.dataDir, "workspaces"), sessionId);
      expect(existsSync(join(workspace, "chat.txt"))).toBe(false);
      const events = await waitForHistory(t.client, sessionId, endTurns(1), TURN_MS);
      expect(ofType(events, "user.tool_confirmation")).toMatchObject([{ result: "deny" }]);
      // The harness that asked heard the answer: one launch for the whole turn.
      expect((await stages(sessionId)).filter((stage) => stage === "ready")).toHaveLength(1);
    },
  );

  it("serves the harness's file requests inside the workspace only", async () => {
    const s = await session();
    await send(s.id, "write /workspace/inside.txt inside\nread /workspace/inside.txt\nsay done");
    let events = await waitForHistory(t.client, s.id, endTurns(1), TURN_MS);
    const said = ofType(events, "agent.message").map(textOf).join("\n");
    expect(said).toContain("inside");
    const workspace = workspaceDirectory(join(t.dataDir, "workspaces"), s.id);
    expect(readFileSync(join(workspace, "inside.txt"), "utf8")).toBe("inside");
    // An escape: refused by the client side, so the harness's turn fails with the refusal.
    await send(s.id, "read /etc/passwd");
    events = await waitForHistory(
      t.client,
      s.id,
      (e) => e.filter((x) => x.type === "session.status_idle").length >= 2,
      TURN_MS,
    );
    const error = JSON.stringify(ofType(events, "session.error").at(-1));
    expect(error).toContain("acp_harness_failed_error");
    expect(error).toContain("workspace");
    expect(JSON.stringify(events)).not.toContain("root:");
  });

  it("a harness that crashes mid-turn is relaunched and the turn retried; a launch that keeps failing ends the run clearly", async () => {
    const s = await session();
    await send(s.id, "say before\ncrash");
    let events = await waitForHistory(t.client, s.id, endTurns(1), TURN_MS);
    // The exit is a Brain error within the retry budget; the relaunched harness reloads its own
    // session and is told to go on, never handed the input again (its script would crash again).
    expect(ofType(events, "session.error")).toMatchObject([
      { error: { type: "acp_harness_failed_error", retry_status: { type: "retrying" } } },
    ]);
    const launches = (await harness(s.id)).filter((stage) => stage.stage === "ready");
    expect(launches.map((stage) => stage.loaded)).toEqual([false, true]);
    expect(textOf(ofType(events, "agent.message").at(-1))).toContain(
      "Your previous attempt at this turn was cut off",
    );

    const broken = await session("fake-broken");
    await send(broken.id, "say never");
    events = await waitForHistory(
      t.client,
      broken.id,
      (e) => e.some((x) => x.type === "session.status_idle"),
      TURN_MS,
    );
    expect((await stages(broken.id)).at(-1)).toBe("failed");
    const error = ofType(events, "session.error").at(-1);
    expect(JSON.stringify(error)).toContain("acp_harness_launch_failed_error");
    expect(JSON.stringify(error)).toContain("fake-broken harness exited during its handshake");
    expect(JSON.stringify(error)).toContain("failing at initialize as asked");
    // Dropped before its session was made: relaunched once, then failed.
    expect(await stages(broken.id)).toEqual([
      "installing",
      "launching",
      "initializing",
      "launching",
      "initializing",
      "failed",
    ]);

    const flaky = await session("fake-flaky");
    await send(flaky.id, "say relaunched");
    events = await waitForHistory(t.client, flaky.id, endTurns(1), TURN_MS);
    expect(await stages(flaky.id)).toEqual([
      "installing",
      "launching",
      "initializing",
      "launching",
      "initializing",
      "ready",
    ]);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("relaunched");
  });

  it("opens the runtime's vault secret for the launch only, and fails naming it when none is pinned", async () => {
    const secret = "harness-token-0123456789abcdef";
    const vault = await t.client.beta.vaults.create({ display_name: "harness" });
    await t.client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "HARNESS_TOKEN",
        secret_value: secret,
        networking: { type: "unrestricted" },
      },
    } as never);
    const [a, e] = await Promise.all([agent("fake-keyed"), environment()]);
    const keyed = await t.client.beta.sessions.create({
      agent: a.id,
      environment_id: e.id,
      vault_ids: [vault.id],
    });
    await send(keyed.id, "env HARNESS_TOKEN");
    let events = await waitForHistory(t.client, keyed.id, endTurns(1), TURN_MS);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe(
      `HARNESS_TOKEN is set (${secret.length} characters)`,
    );
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(JSON.stringify(await harness(keyed.id))).not.toContain(secret);

    const bare = await t.client.beta.sessions.create({ agent: a.id, environment_id: e.id });
    await send(bare.id, "env HARNESS_TOKEN");
    events = await waitForHistory(
      t.client,
      bare.id,
      (x) => x.some((y) => y.type === "session.status_idle"),
      TURN_MS,
    );
    expect((await stages(bare.id)).at(-1)).toBe("failed");
    expect(JSON.stringify(ofType(events, "session.error").at(-1))).toContain(
      "names vault secret HARNESS_TOKEN, and the session pinned none",
    );
  });

  it("an environment without the harness's package fails the launch naming it", async () => {
    const s = await session("fake", []);
    await send(s.id, "say never");
    const events = await waitForHistory(
      t.client,
      s.id,
      (e) => e.some((x) => x.type === "session.status_idle"),
      TURN_MS,
    );
    expect(await stages(s.id)).toEqual(["installing", "failed"]);
    expect(JSON.stringify(ofType(events, "session.error").at(-1))).toContain(
      `add \\"${PACKAGE}@1.0.0\\" to config.packages.npm`,
    );
  });

  it("an interrupt cancels the harness's prompt and the next turn goes on in the same harness", async () => {
    const s = await session();
    await send(s.id, "slow 60000");
    for (let i = 0; i < 600 && !(await stages(s.id)).includes("ready"); i++)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    await t.client.beta.sessions.events.send(s.id, { events: [{ type: "user.interrupt" }] });
    await waitForHistory(t.client, s.id, (e) => e.some((x) => x.type === "session.status_idle"), TURN_MS);
    await send(s.id, "say after the interrupt");
    const events = await waitForHistory(
      t.client,
      s.id,
      (e) => ofType(e, "agent.message").some((m) => textOf(m) === "after the interrupt"),
      TURN_MS,
    );
    expect((await stages(s.id)).filter((stage) => stage === "ready")).toHaveLength(1);
    expect(events.filter((e) => e.type === "user.interrupt")).toHaveLength(1);
  });

  it("an interrupt while the run is parked on a harness's permission: the ask is cancelled and the next message starts a new prompt", async () => {
    const s = await session();
    await send(s.id, 'tool edit parked {"path":"/workspace/parked.txt","content":"no"}');
    await waitForHistory(t.client, s.id, (e) => e.some(isActionIdle), TURN_MS);
    await t.client.beta.sessions.events.send(s.id, { events: [{ type: "user.interrupt" }] });
    await send(s.id, "say after the parked interrupt");
    await waitForHistory(
      t.client,
      s.id,
      (e) => ofType(e, "agent.message").some((m) => textOf(m) === "after the parked interrupt"),
      TURN_MS,
    );
    const workspace = workspaceDirectory(join(t.dataDir, "workspaces"), s.id);
    expect(existsSync(join(workspace, "parked.txt"))).toBe(false);
    expect((await stages(s.id)).filter((stage) => stage === "ready")).toHaveLength(1);
  });
});
