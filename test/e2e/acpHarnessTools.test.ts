/**
 * The agent's own tools offered to an ACP harness, end to end through the official Anthropic SDK
 * over real HTTP: the scripted harness (test/support/acp/fakeHarness.mjs) in a real bwrap sandbox
 * finds them on the MCP server its session names (a bridge to a socket in the sandbox's private
 * directory), and calls them as Claude Code does (`mcp__awaken__<tool>`, asking permission first).
 * A custom tool's call is committed once, as `agent.custom_tool_use`, and parks the run until the
 * client's `user.custom_tool_result`, which the waiting harness then receives. An MCP toolset's
 * call passes the agent's gate and runs through the worker's MCP client (a real MCP server on the
 * loopback, its bearer from a vault), asked first when the policy says so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HARNESS_PACKAGE, serveHarnessPackage, startHarnessServer } from "../support/acp/harnessPackage.js";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
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
import { LOOPBACK, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const TURN_MS = 60_000;

let scratch: string;
let registry: FakeNpmRegistry;
let mcp: BearerMcpServer;
let t: TestServer;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "awaken-acp-tools-"));
  const served = await serveHarnessPackage(scratch);
  registry = served.registry;
  mcp = await startBearerMcpServer();
  t = await startHarnessServer(served.runtimesFile, registry.url, { allowPrivateHosts: LOOPBACK });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await registry?.close();
  await mcp?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const LOOKUP = {
  type: "custom" as const,
  name: "lookup",
  description: "Looks a question up in the caller's own records.",
  input_schema: { type: "object" as const, properties: { q: { type: "string" } }, required: ["q"] },
};

/** A session of an agent on the scripted harness with `tools` beside the built-in ones (all allowed). */
async function toolSession(tools: unknown[] = [LOOKUP], extra: Record<string, unknown> = {}) {
  const [agent, environment] = await Promise.all([
    t.client.beta.agents.create({
      name: "acp-tools",
      model: "acp:fake",
      tools: [
        { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
        ...tools,
      ],
      ...extra,
    } as never),
    t.client.beta.environments.create({
      name: "acp-tools",
      config: {
        type: "cloud",
        packages: { type: "packages", npm: [`${HARNESS_PACKAGE}@1.0.0`] },
        sandbox: { provisioning: "eager" },
      } as never,
    }),
  ]);
  const vaultIds = "mcp_servers" in extra ? [await mcpVault()] : [];
  return t.client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    ...(vaultIds.length > 0 ? { vault_ids: vaultIds } : {}),
  } as never);
}

/** A vault holding the MCP server's bearer. */
async function mcpVault(): Promise<string> {
  const token = `tok-${Math.random().toString(36).slice(2)}`;
  mcp.accepted.add(token);
  const vault = await t.client.beta.vaults.create({ display_name: "mcp" } as never);
  await t.client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token, mcp_server_url: mcp.url },
  } as never);
  return vault.id;
}

const send = (id: string, text: string) =>
  t.client.beta.sessions.events.send(id, { events: [userMessage(text)] });
const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);

async function readyStages(sessionId: string): Promise<number> {
  const response = await fetch(`${t.server.url}/v1/awaken/sessions/${sessionId}/harness`, {
    headers: { "x-api-key": TEST_API_KEY },
  });
  const { data } = (await response.json()) as { data: Array<{ stage: string }> };
  return data.filter((stage) => stage.stage === "ready").length;
}

describe("the agent's own tools on an ACP harness", { timeout: 180_000 }, () => {
  it("a custom tool the harness calls is the client's to answer: one custom tool use, the run parked, the result handed to the waiting harness", async () => {
    const s = await toolSession();
    await send(s.id, ["tools", 'mcp lookup {"q":"capital of France"}'].join("\n"));
    let events = await waitForHistory(t.client, s.id, (e) => e.some(isActionIdle), TURN_MS);
    expect(textOf(ofType(events, "agent.message")[0])).toBe("tools: lookup");
    const uses = ofType(events, "agent.custom_tool_use");
    expect(uses).toMatchObject([{ name: "lookup", input: { q: "capital of France" } }]);
    // The harness's own report of the call (its `mcp__awaken__lookup`) is that one use, not a second.
    expect(ofType(events, "agent.tool_use")).toEqual([]);
    expect(stopReason(events.filter(isActionIdle).at(-1))?.event_ids).toEqual([uses[0]?.id]);

    await t.client.beta.sessions.events.send(s.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: uses[0]?.id as string,
          content: [{ type: "text", text: "Paris" }],
        },
      ] as never,
    });
    events = await waitForHistory(t.client, s.id, (e) => e.some(isEndTurnIdle), TURN_MS);
    const said = ofType(events, "agent.message").map(textOf);
    expect(said).toEqual(["tools: lookup", "tool lookup: Paris"]);
    expect(ofType(events, "agent.custom_tool_use")).toHaveLength(1);
    // The harness that called waited on this worker for the answer: one launch for the turn.
    expect(await readyStages(s.id)).toBe(1);
  });

  it("a custom tool's error result reaches the harness as a failed call", async () => {
    const s = await toolSession();
    await send(s.id, 'mcp lookup {"q":"unknowable"}');
    let events = await waitForHistory(t.client, s.id, (e) => e.some(isActionIdle), TURN_MS);
    const use = ofType(events, "agent.custom_tool_use")[0];
    await t.client.beta.sessions.events.send(s.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: use?.id as string,
          content: [{ type: "text", text: "no record" }],
          is_error: true,
        },
      ] as never,
    });
    events = await waitForHistory(t.client, s.id, (e) => e.some(isEndTurnIdle), TURN_MS);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("tool lookup failed: no record");
  });

  it("an MCP toolset's tools: an allowed call runs through the worker's MCP client, an asked one waits for a confirmation", async () => {
    const s = await toolSession(
      [
        {
          type: "mcp_toolset",
          mcp_server_name: "docs",
          default_config: { permission_policy: { type: "always_allow" } },
          configs: [{ name: "counter", permission_policy: { type: "always_ask" } }],
        },
      ],
      { mcp_servers: [{ name: "docs", type: "url", url: mcp.url }] },
    );
    const before = mcp.calls.length;
    await send(s.id, ["tools", 'mcp lookup {"q":"harness"}', 'mcp counter {"name":"turns"}'].join("\n"));
    let events = await waitForHistory(t.client, s.id, (e) => e.some(isActionIdle), TURN_MS);
    expect(textOf(ofType(events, "agent.message")[0])).toBe("tools: lookup, counter");
    const uses = ofType(events, "agent.mcp_tool_use");
    expect(uses.map((u) => [u.name, u.mcp_server_name, u.evaluated_permission])).toEqual([
      ["lookup", "docs", "allow"],
      ["counter", "docs", "ask"],
    ]);
    expect(ofType(events, "agent.mcp_tool_result")).toMatchObject([{ mcp_tool_use_id: uses[0]?.id }]);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("tool lookup: definition of harness");
    // Nothing of the asked call reached the server yet; the harness's own reports are no uses.
    expect(mcp.calls.slice(before).map((c) => c.tool)).toEqual(["lookup"]);
    expect(ofType(events, "agent.tool_use")).toEqual([]);
    expect(stopReason(events.filter(isActionIdle).at(-1))?.event_ids).toEqual([uses[1]?.id]);

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: uses[1]?.id as string, result: "allow" }],
    });
    events = await waitForHistory(t.client, s.id, (e) => e.some(isEndTurnIdle), TURN_MS);
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("tool counter: turns=1");
    expect(mcp.calls.slice(before).map((c) => c.tool)).toEqual(["lookup", "counter"]);
    expect(ofType(events, "agent.mcp_tool_result")).toHaveLength(2);
    expect(await readyStages(s.id)).toBe(1);
  });

  it("an interrupt while the run waits for a custom tool's result: the harness's call is cancelled and the next message starts a new prompt", async () => {
    const s = await toolSession();
    await send(s.id, 'mcp lookup {"q":"never answered"}');
    let events = await waitForHistory(t.client, s.id, (e) => e.some(isActionIdle), TURN_MS);
    await t.client.beta.sessions.events.send(s.id, { events: [{ type: "user.interrupt" }] as never });
    await send(s.id, "say after the interrupt");
    events = await waitForHistory(
      t.client,
      s.id,
      (e) => ofType(e, "agent.message").some((m) => textOf(m) === "after the interrupt"),
      TURN_MS,
    );
    expect(events.filter(isEndTurnIdle).length).toBeGreaterThanOrEqual(1);
    // The same harness took the new prompt.
    expect(await readyStages(s.id)).toBe(1);
  });

  it("calls made at once are carried out one after another: each its own custom tool use and park, none refused", async () => {
    const s = await toolSession();
    await send(s.id, 'mcpall lookup {"q":"first"} ;; lookup {"q":"second"}');
    const answered: string[] = [];
    for (let round = 1; round <= 2; round++) {
      const events = await waitForHistory(
        t.client,
        s.id,
        (e) => e.filter(isActionIdle).length >= round && e.at(-1)?.type === "session.status_idle",
        TURN_MS,
      );
      const uses = ofType(events, "agent.custom_tool_use");
      expect(uses).toHaveLength(round);
      const use = uses.at(-1);
      const q = (use?.input as { q: string } | undefined)?.q ?? "";
      answered.push(q);
      await t.client.beta.sessions.events.send(s.id, {
        events: [
          {
            type: "user.custom_tool_result",
            custom_tool_use_id: use?.id as string,
            content: [{ type: "text", text: `answer to ${q}` }],
          },
        ] as never,
      });
    }
    expect(answered.sort()).toEqual(["first", "second"]);
    const events = await waitForHistory(t.client, s.id, (e) => e.some(isEndTurnIdle), TURN_MS);
    const said = ofType(events, "agent.message").map(textOf).join("");
    expect(said).toContain("tool lookup: answer to first");
    expect(said).toContain("tool lookup: answer to second");
    expect(said).not.toContain("failed");
  });
});
