/**
 * A real harness from the npm registry as an agent's Brain: Zed's Claude Agent ACP adapter (the
 * `claude` runtime's package, Claude Code inside), installed as the environment's npm package from
 * a loopback registry serving the bytes `npm ci` put in node_modules, launched inside a real bwrap
 * sandbox, reaching the scripted fake Anthropic API through the sandbox's egress proxy. A turn with
 * a Bash call the agent's policy asks about: the harness's permission request parks the run, a
 * Managed confirmation allows it, Claude Code runs the command in the workspace, sends its result
 * to the model, and the turn ends with the model's answer; the call is committed with the harness marker.
 * Then the agent's custom tool, which Claude Code finds on the session's `awaken` MCP server (its
 * stdio bridge started inside the sandbox) and calls: one `agent.custom_tool_use`, the run parked
 * until the client's result, which reaches the model through Claude Code.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SHIPPED_ACP_RUNTIMES } from "../../src/brains/shippedRuntimes.js";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import { startHarnessServer } from "../support/acp/harnessPackage.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import type { FakeNpmRegistry } from "../support/fakeNpmRegistry.js";
import { serveInstalledPackage } from "../support/installedPackageRegistry.js";
import { isActionIdle, isEndTurnIdle, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { TEST_API_KEY, type TestServer } from "../support/testServer.js";

const CLAUDE = SHIPPED_ACP_RUNTIMES.find((r) => r.name === "claude")!;
/** Claude Code's name for the agent's custom tool `lookup` on the session's `awaken` MCP server. */
const LOOKUP_AS_CLAUDE_NAMES_IT = "mcp__awaken__lookup";
const PACKAGE = `${CLAUDE.package.name}@${CLAUDE.package.version}`;
/** The fake API's host as the sandbox names it: only the egress proxy's resolver knows it. */
const API_HOST = "anthropic.test";
const API_KEY = "sk-ant-harness-0123456789abcdef";
/** Claude Code's start-up alone takes ~5 s here, 25 s on a loaded machine. */
const TURN_MS = 150_000;

let scratch: string;
let registry: FakeNpmRegistry;
let model: FakeModelServer;
let t: TestServer;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "awaken-acp-claude-"));
  registry = await serveInstalledPackage(CLAUDE.package.name, scratch);
  model = await startFakeAnthropic();
  // The shipped definition, with the operator's gateway as the model's address.
  const runtimesFile = join(scratch, "runtimes.json");
  writeFileSync(
    runtimesFile,
    JSON.stringify({
      runtimes: [
        {
          ...CLAUDE,
          env: { ...CLAUDE.env, ANTHROPIC_BASE_URL: `http://${API_HOST}:${new URL(model.url).port}` },
        },
      ],
    }),
  );
  t = await startHarnessServer(runtimesFile, registry.url, {
    sandboxEgress: {
      resolve: async (host) => (host === API_HOST ? [{ address: "127.0.0.1", family: 4 }] : []),
      allowAddress: (address) => address === "127.0.0.1",
      onRefusal: () => {},
    },
  });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await model?.close();
  await registry?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The model's side of a turn: call the custom tool if offered, else Bash; then answer with the result. */
function scriptModel() {
  model.setFallback((body) => {
    const messages = (body.messages as Array<{ role: string; content: unknown }>) ?? [];
    const last = messages.at(-1);
    const result = Array.isArray(last?.content)
      ? (last.content as Array<Record<string, unknown>>).find((b) => b.type === "tool_result")
      : undefined;
    if (result) return { kind: "text", text: `the command said: ${JSON.stringify(result.content)}` };
    const tools = (body.tools as Array<{ name: string }> | undefined) ?? [];
    if (tools.some((tool) => tool.name === LOOKUP_AS_CLAUDE_NAMES_IT)) {
      return { kind: "tool_use", name: LOOKUP_AS_CLAUDE_NAMES_IT, input: { q: "capital of France" } };
    }
    if (tools.some((tool) => tool.name === "Bash")) {
      return {
        kind: "tool_use",
        name: "Bash",
        input: { command: "echo written-by-claude > proof.txt && cat proof.txt", description: "Write proof" },
        text: "I will write the proof.",
      };
    }
    // Claude Code's side requests (a title, a command's prefix): a short answer is enough.
    return { kind: "text", text: "none" };
  });
}

/**
 * A session of an `acp:claude` agent with `tools`: its environment installs the adapter and lets it
 * reach only the fake API's host; its vault holds the key the runtime names.
 */
async function claudeSession(name: string, tools: unknown[]) {
  const vault = await t.client.beta.vaults.create({ display_name: "anthropic" });
  await t.client.beta.vaults.credentials.create(vault.id, {
    auth: {
      type: "environment_variable",
      secret_name: "ANTHROPIC_API_KEY",
      secret_value: API_KEY,
      // The harness gets the key itself (its runtime names it); no host needs the proxy to put
      // it in. A host a credential names has its CONNECTs answered with the sandbox's TLS, which
      // a plain-HTTP model address behind CONNECT would not speak.
      networking: { type: "limited", allowed_hosts: ["vault.test"] },
    },
  } as never);
  const agent = await t.client.beta.agents.create({ name, model: "acp:claude", tools } as never);
  const environment = await t.client.beta.environments.create({
    name,
    config: {
      type: "cloud",
      packages: { type: "packages", npm: [PACKAGE] },
      networking: { type: "limited", allowed_hosts: [API_HOST], allow_package_managers: true },
      sandbox: { provisioning: "eager" },
    } as never,
  });
  return t.client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    vault_ids: [vault.id],
  });
}

it("Claude Code from the registry runs a turn: its Bash call asked through the gate, allowed over the Managed API, run in the workspace", {
  timeout: 300_000,
}, async () => {
  scriptModel();
  const session = await claudeSession("claude-harness", [
    {
      type: "agent_toolset_20260401",
      default_config: { permission_policy: { type: "always_allow" } },
      configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
    },
  ]);
  await t.client.beta.sessions.events.send(session.id, {
    events: [userMessage("write the proof file")],
  });

  let events = await waitForHistory(t.client, session.id, (e) => e.some(isActionIdle), TURN_MS);
  const uses = events.filter((e) => e.type === "agent.tool_use");
  expect(uses.map((u) => [u.name, u.evaluated_permission, u.awaken_harness])).toEqual([
    ["bash", "ask", true],
  ]);
  expect(JSON.stringify(uses[0]?.input)).toContain("echo written-by-claude");
  const workspace = workspaceDirectory(join(t.dataDir, "workspaces"), session.id);
  // Asked, not yet run.
  expect(() => readFileSync(join(workspace, "proof.txt"))).toThrow();

  await t.client.beta.sessions.events.send(session.id, {
    events: [{ type: "user.tool_confirmation", tool_use_id: uses[0]?.id as string, result: "allow" }],
  });
  events = await waitForHistory(t.client, session.id, (e) => e.some(isEndTurnIdle), TURN_MS);
  expect(readFileSync(join(workspace, "proof.txt"), "utf8")).toBe("written-by-claude\n");
  const results = events.filter((e) => e.type === "agent.tool_result");
  expect(results).toHaveLength(1);
  expect(results[0]).toMatchObject({ tool_use_id: uses[0]?.id, is_error: false });
  expect(JSON.stringify(results[0]?.content)).toContain("written-by-claude");
  const answer = textOf(events.filter((e) => e.type === "agent.message").at(-1));
  expect(answer).toContain("the command said:");
  expect(answer).toContain("written-by-claude");

  // The tokens Claude Code reported for its prompt are the session's.
  const ends = events.filter((e) => e.type === "span.model_request_end");
  const reported = ends.at(-1)?.model_usage as { input_tokens: number; output_tokens: number };
  expect(reported.input_tokens).toBeGreaterThan(0);
  expect(reported.output_tokens).toBeGreaterThan(0);
  const usage = (await t.client.beta.sessions.retrieve(session.id)).usage;
  expect(usage?.input_tokens).toBe(reported.input_tokens);

  // The model saw the harness's request with the key the vault pinned, through the egress proxy.
  const turn = model.requests.filter((r) => Array.isArray(r.body.tools) && r.body.tools.length > 0);
  expect(turn.length).toBeGreaterThanOrEqual(2);
  expect(turn[0]?.headers["x-api-key"]).toBe(API_KEY);
  // No secret in any event or in the harness's stages.
  expect(JSON.stringify(events)).not.toContain(API_KEY);
  const stages = await fetch(`${t.server.url}/v1/awaken/sessions/${session.id}/harness`, {
    headers: { "x-api-key": TEST_API_KEY },
  });
  const body = (await stages.json()) as { data: Array<{ stage: string }> };
  expect(body.data.map((s) => s.stage)).toEqual(["installing", "launching", "initializing", "ready"]);
  expect(JSON.stringify(body)).not.toContain(API_KEY);
});

it("Claude Code calls the agent's custom tool on the session's MCP server: the run parks for the client's result, which reaches the model", {
  timeout: 300_000,
}, async () => {
  scriptModel();
  const session = await claudeSession("claude-custom-tool", [
    { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
    {
      type: "custom",
      name: "lookup",
      description: "Looks a question up in the caller's own records.",
      input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    },
  ]);
  const asked = model.requests.length;
  await t.client.beta.sessions.events.send(session.id, { events: [userMessage("look it up")] });

  let events = await waitForHistory(t.client, session.id, (e) => e.some(isActionIdle), TURN_MS);
  const uses = events.filter((e) => e.type === "agent.custom_tool_use");
  expect(uses).toMatchObject([{ name: "lookup", input: { q: "capital of France" } }]);
  // Claude Code's own report of the call is that one use, not a harness tool use beside it.
  expect(events.filter((e) => e.type === "agent.tool_use")).toEqual([]);
  // The model was offered the tool under Claude Code's name for it.
  const offered = model.requests
    .slice(asked)
    .some((r) =>
      (r.body.tools as Array<{ name: string }> | undefined)?.some(
        (tool) => tool.name === LOOKUP_AS_CLAUDE_NAMES_IT,
      ),
    );
  expect(offered).toBe(true);

  await t.client.beta.sessions.events.send(session.id, {
    events: [
      {
        type: "user.custom_tool_result",
        custom_tool_use_id: uses[0]?.id as string,
        content: [{ type: "text", text: "Paris" }],
      },
    ] as never,
  });
  events = await waitForHistory(t.client, session.id, (e) => e.some(isEndTurnIdle), TURN_MS);
  const answer = textOf(events.filter((e) => e.type === "agent.message").at(-1));
  expect(answer).toContain("the command said:");
  expect(answer).toContain("Paris");
  expect(events.filter((e) => e.type === "agent.custom_tool_use")).toHaveLength(1);
  expect(JSON.stringify(events)).not.toContain(API_KEY);
});
