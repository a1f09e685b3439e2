/**
 * A server killed with SIGKILL while its ACP harness Brain runs a tool: after the restart the run
 * resumes, the harness is relaunched and reloads its own session, the cut-off call is closed as
 * interrupted (never run again), and the turn ends. The tool's side effect happened exactly once.
 * And a harness that called the agent's custom tool, killed with its server while the run waited for
 * the client: the result sent to the restarted server reaches the relaunched harness in its prompt.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import { HARNESS_PACKAGE, type HarnessPackage, serveHarnessPackage } from "../support/acp/harnessPackage.js";
import { isEndTurnIdle, textOf, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const API_KEY = "sk-acp-brain-killed-test-key";
const TURN_MS = 90_000;

let scratch: string;
let dataDir: string;
let served: HarnessPackage;
const running: ServerProcess[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "awaken-acp-killed-"));
  dataDir = join(scratch, "data");
  served = await serveHarnessPackage(scratch);
}, 60_000);

afterAll(async () => {
  for (const p of running)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await Promise.all(running.map((p) => p.exited));
  await served?.registry.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A server on `dir` (each test has its own: a server of an earlier test may still hold its own). */
async function start(dir = dataDir): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir: dir,
    apiKey: API_KEY,
    env: {
      HOME: process.env.HOME,
      npm_config_registry: served.registry.url,
      npm_config_fetch_retries: "0",
    },
    args: ["--acp-runtimes", served.runtimesFile],
  });
  running.push(p);
  return p;
}

async function stagesOf(p: ServerProcess, sessionId: string): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${p.url}/v1/awaken/sessions/${sessionId}/harness`, {
    headers: { "x-api-key": API_KEY },
  });
  return ((await response.json()) as { data: Array<Record<string, unknown>> }).data;
}

/** A session of an `acp:fake` agent with `tools`, in an environment that installs the harness. */
async function harnessSession(server: ServerProcess, name: string, tools: unknown[]) {
  const environment = await server.client.beta.environments.create({
    name,
    config: {
      type: "cloud",
      packages: { type: "packages", npm: [`${HARNESS_PACKAGE}@1.0.0`] },
      sandbox: { provisioning: "eager" },
    } as never,
  });
  const agent = await server.client.beta.agents.create({ name, model: "acp:fake", tools } as never);
  return server.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

/**
 * Sends `prompt`, waits until the run parks on a call of type `useType`, SIGKILLs the server and
 * starts another on `dir`, posts `answer(call id)` to it, and waits for the turn to end there.
 */
async function answerAfterKill(
  first: ServerProcess,
  dir: string,
  sessionId: string,
  prompt: string,
  useType: string,
  answer: (callId: string) => unknown,
) {
  await first.client.beta.sessions.events.send(sessionId, { events: [userMessage(prompt)] });
  const parked = await waitForHistory(
    first.client,
    sessionId,
    (e) => e.some((x) => x.type === useType) && e.at(-1)?.type === "session.status_idle",
    TURN_MS,
  );
  const use = parked.find((e) => e.type === useType);
  first.child.kill("SIGKILL");
  expect(await first.exited).toBe("SIGKILL");
  const second = await start(dir);
  await second.client.beta.sessions.events.send(sessionId, { events: [answer(use?.id as string)] as never });
  const events = (await waitForHistory(
    second.client,
    sessionId,
    (e) => e.some(isEndTurnIdle),
    TURN_MS,
  )) as WireEvent[];
  return { second, events, callId: use?.id };
}

describe("an ACP harness Brain across a killed server", { timeout: 240_000 }, () => {
  it("resumes the turn without running the cut-off call again", async () => {
    const first = await start();
    const session = await harnessSession(first, "acp-killed", [
      { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
    ]);
    const count = join(workspaceDirectory(join(dataDir, "workspaces"), session.id), "count");
    await first.client.beta.sessions.events.send(session.id, {
      events: [
        userMessage(
          'tool execute counting {"command":"bash","args":["-c","echo ran >> /workspace/count; sleep 120"]}\nsay finished',
        ),
      ],
    });
    // The call is running inside the harness's terminal: its effect has happened once.
    const deadline = Date.now() + TURN_MS;
    while (!(existsSync(count) && readFileSync(count, "utf8").includes("ran"))) {
      if (Date.now() > deadline) throw new Error("the harness's call never ran");
      await new Promise((r) => setTimeout(r, 100));
    }
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");

    const second = await start();
    const events = (await waitForHistory(
      second.client,
      session.id,
      (e) => e.some(isEndTurnIdle),
      TURN_MS,
    )) as WireEvent[];
    expect(readFileSync(count, "utf8")).toBe("ran\n");
    const uses = events.filter((e) => e.type === "agent.tool_use");
    expect(uses.map((u) => [u.name, u.awaken_harness])).toEqual([["bash", true]]);
    const results = events.filter((e) => e.type === "agent.tool_result" && e.tool_use_id === uses[0]?.id);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(textOf(results[0])).toContain("was not run again");
    const launches = (await stagesOf(second, session.id)).filter((s) => s.stage === "ready");
    expect(launches.map((s) => s.loaded)).toEqual([false, true]);
    const said = events
      .filter((e) => e.type === "agent.message")
      .map(textOf)
      .join("\n");
    expect(said).toContain("Your previous attempt at this turn was cut off");
  });

  it("a custom tool's result that comes after the harness that called it died reaches the relaunched harness", async () => {
    const toolData = join(scratch, "data-tool");
    const first = await start(toolData);
    const session = await harnessSession(first, "acp-killed-tool", [
      {
        type: "custom",
        name: "lookup",
        description: "Looks a question up.",
        input_schema: { type: "object", properties: { q: { type: "string" } } },
      },
    ]);
    const { second, events } = await answerAfterKill(
      first,
      toolData,
      session.id,
      'mcp lookup {"q":"capital of France"}',
      "agent.custom_tool_use",
      (callId) => ({
        type: "user.custom_tool_result",
        custom_tool_use_id: callId,
        content: [{ type: "text", text: "Paris" }],
      }),
    );
    const launches = (await stagesOf(second, session.id)).filter((s) => s.stage === "ready");
    expect(launches.map((s) => s.loaded)).toEqual([false, true]);
    // The reloaded harness is told to go on, and what its call answered.
    const said = textOf(events.filter((e) => e.type === "agent.message").at(-1));
    expect(said).toContain("(The result of your call of the lookup tool: Paris)");
    expect(events.filter((e) => e.type === "agent.custom_tool_use")).toHaveLength(1);
  });

  it("a decision on a harness's ask that comes after the harness died: the call is closed as not run and the relaunched harness is told", async () => {
    const askData = join(scratch, "data-ask");
    const first = await start(askData);
    const session = await harnessSession(first, "acp-killed-ask", [
      {
        type: "agent_toolset_20260401",
        default_config: { permission_policy: { type: "always_allow" } },
        configs: [{ name: "edit", permission_policy: { type: "always_ask" } }],
      },
    ]);
    const { events, callId } = await answerAfterKill(
      first,
      askData,
      session.id,
      'tool edit asked {"path":"/workspace/asked.txt","content":"no"}',
      "agent.tool_use",
      (id) => ({ type: "user.tool_confirmation", tool_use_id: id, result: "allow" }),
    );
    const results = events.filter((e) => e.type === "agent.tool_result" && e.tool_use_id === callId);
    expect(results).toMatchObject([{ is_error: true }]);
    expect(textOf(results[0])).toContain("did not run");
    const workspace = workspaceDirectory(join(askData, "workspaces"), session.id);
    expect(existsSync(join(workspace, "asked.txt"))).toBe(false);
    // The relaunched harness heard what became of its call, instead of the turn ending unsaid.
    const said = textOf(events.filter((e) => e.type === "agent.message").at(-1));
    expect(said).toContain("(Your edit call was allowed, but you were restarted before it ran");
  });
});
