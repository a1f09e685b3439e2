/**
 * The scripted ACP harness the ACP Brain tests use, driven by the official SDK's client side over
 * its real stdin and stdout, bundled as the tests run it, as a process of a real sandbox whose file
 * and terminal requests are served by the client services (HarnessClientServices).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import {
  type ClientConnection,
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HarnessClientServices } from "../../../src/runtime/acp/harnessClientServices.js";
import { BwrapTierProvider, bwrapAvailable } from "../../../src/sandbox/bwrapTier.js";
import { NoneTierProvider } from "../../../src/sandbox/noneTier.js";
import type { Sandbox, SandboxProcess, SandboxProvider } from "../../../src/sandbox/ports.js";
import { workspaceDirectory } from "../../../src/sandbox/workspaces.js";
import { bundleFakeHarness } from "./fakeHarnessBundle.js";

const hasBwrap = await bwrapAvailable();
const signal = new AbortController().signal;

let root: string;
let bundle: string;
const providers = new Map<"none" | "bwrap", SandboxProvider>();
const running: Array<{
  process: SandboxProcess;
  services: HarnessClientServices;
  connection: ClientConnection;
}> = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fake-harness-"));
  bundle = await bundleFakeHarness();
  providers.set("none", new NoneTierProvider(join(root, "none")));
  if (hasBwrap) {
    providers.set(
      "bwrap",
      new BwrapTierProvider({
        workspaceRoot: join(root, "bwrap"),
        uidRange: { first: 239_100, last: 239_199 },
        poolSize: 0,
      }),
    );
  }
});
afterEach(async () => {
  for (const { process, services, connection } of running.splice(0)) {
    connection.close();
    await services.close();
    await process.kill();
  }
});
afterAll(async () => {
  await Promise.all([...providers.values()].map((provider) => provider.close()));
  await rm(root, { recursive: true, force: true });
});

interface Launched {
  sandbox: Sandbox;
  /** The workspace as the host sees it. */
  hostWorkspace: string;
  process: SandboxProcess;
  connection: ClientConnection;
  updates: SessionUpdate[];
  permissions: RequestPermissionRequest[];
  /** What the next permission requests answer (then "allow"). */
  answers: Array<"allow" | "reject" | "cancelled">;
  /** Every line the harness wrote on stdout. */
  stdoutLines(): string[];
}

let sessions = 0;

/** The harness, started in the sandbox of session `sessionId` (a new one unless given). */
async function launch(
  options: { tier?: "none" | "bwrap"; sessionId?: string; env?: Record<string, string> } = {},
): Promise<Launched> {
  const tier = options.tier ?? "none";
  const provider = providers.get(tier)!;
  sessions += 1;
  const sessionId = options.sessionId ?? `fh${sessions}`;
  const sandbox = await provider.realize({ tier, sessionId, networking: { type: "unrestricted" } });
  const hostWorkspace = workspaceDirectory(join(root, tier), sessionId);
  // In the workspace: the bwrap tier sees nothing else of the host's temp dir.
  writeFileSync(join(hostWorkspace, "harness.mjs"), bundle);
  const process = await sandbox.spawn({
    argv: ["node", `${sandbox.workspacePath}/harness.mjs`],
    env: options.env ?? {},
    maxStderrBytes: 4096,
    signal,
  });
  let raw = "";
  process.stdout.on("data", (chunk: Buffer) => {
    raw += chunk.toString("utf8");
  });
  const services = new HarnessClientServices(sandbox, { signal });
  const updates: SessionUpdate[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const answers: Launched["answers"] = [];
  const app = client({ name: "fake-harness-test" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      const answer = answers.shift() ?? "allow";
      return {
        outcome:
          answer === "cancelled" ? { outcome: "cancelled" } : { outcome: "selected", optionId: answer },
      };
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => services.readTextFile(params))
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => services.writeTextFile(params))
    .onRequest(methods.client.terminal.create, ({ params }) => services.createTerminal(params))
    .onRequest(methods.client.terminal.output, ({ params }) => services.terminalOutput(params))
    .onRequest(methods.client.terminal.waitForExit, ({ params, signal: request }) =>
      services.waitForTerminalExit(params, request),
    )
    .onRequest(methods.client.terminal.kill, ({ params }) => services.killTerminal(params))
    .onRequest(methods.client.terminal.release, ({ params }) => services.releaseTerminal(params));
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(process.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(process.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  running.push({ process, services, connection });
  return {
    sandbox,
    hostWorkspace,
    process,
    connection,
    updates,
    permissions,
    answers,
    stdoutLines: () => raw.split("\n").filter(Boolean),
  };
}

function initialize(h: Launched) {
  return h.connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  });
}

async function started(h: Launched): Promise<string> {
  await initialize(h);
  const { sessionId } = await h.connection.agent.request(methods.agent.session.new, {
    cwd: h.sandbox.workspacePath,
    mcpServers: [],
  });
  return sessionId;
}

function prompt(h: Launched, sessionId: string, script: string) {
  return h.connection.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: script }],
  });
}

/** The text of every update of `kind`, joined. */
function said(updates: SessionUpdate[], kind = "agent_message_chunk"): string {
  return updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => ("content" in u && u.content && "text" in u.content ? u.content.text : ""))
    .join("");
}

function toolUpdates(updates: SessionUpdate[]) {
  return updates.filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
}

describe("the fake ACP harness", () => {
  it("initializes with loadSession, says a message in chunks, thinks, and writes nothing but protocol on stdout", async () => {
    const h = await launch();
    const init = await initialize(h);
    expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(init.agentCapabilities?.loadSession).toBe(true);
    const { sessionId } = await h.connection.agent.request(methods.agent.session.new, {
      cwd: h.sandbox.workspacePath,
      mcpServers: [],
    });
    const message = "hello there, this is a longer message than one chunk";
    expect(await prompt(h, sessionId, `say ${message}\nthink about it`)).toEqual({ stopReason: "end_turn" });
    expect(h.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").length).toBeGreaterThan(2);
    expect(said(h.updates)).toBe(`${message}done thinking`);
    expect(said(h.updates, "agent_thought_chunk")).toBe("about it");
    expect(said(h.updates, "user_message_chunk")).toBe(`say ${message}\nthink about it`);
    for (const line of h.stdoutLines()) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
  });

  it("tool edit: asks permission, then writes through fs/write_text_file and completes with a diff", async () => {
    const h = await launch();
    const sessionId = await started(h);
    const path = `${h.sandbox.workspacePath}/notes/a.txt`;
    const input = JSON.stringify({ path, content: "edited\n" });
    expect(await prompt(h, sessionId, `tool edit Write notes ${input}`)).toEqual({ stopReason: "end_turn" });
    expect(h.permissions).toHaveLength(1);
    expect(h.permissions[0]!.toolCall).toMatchObject({
      title: "Write notes",
      kind: "edit",
      status: "pending",
    });
    expect(h.permissions[0]!.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
    expect(toolUpdates(h.updates).map((u) => u.status)).toEqual(["pending", "in_progress", "completed"]);
    expect(toolUpdates(h.updates)[2]).toMatchObject({
      content: [{ type: "diff", path, newText: "edited\n" }],
    });
    expect(readFileSync(join(h.hostWorkspace, "notes/a.txt"), "utf8")).toBe("edited\n");
  });

  it("tool edit rejected: fails with denied and writes nothing", async () => {
    const h = await launch();
    const sessionId = await started(h);
    h.answers.push("reject");
    const input = JSON.stringify({ path: `${h.sandbox.workspacePath}/no.txt`, content: "x" });
    expect(await prompt(h, sessionId, `tool edit Write ${input}\nsay after`)).toEqual({
      stopReason: "end_turn",
    });
    const tools = toolUpdates(h.updates);
    expect(tools.map((u) => u.status)).toEqual(["pending", "failed"]);
    expect(tools[1]).toMatchObject({
      content: [{ type: "content", content: { type: "text", text: "denied" } }],
    });
    expect(existsSync(join(h.hostWorkspace, "no.txt"))).toBe(false);
    expect(said(h.updates)).toBe("after");
  });

  it("tool execute runs a terminal, shows it, and completes with its output; tool read reads", async () => {
    const h = await launch();
    const sessionId = await started(h);
    writeFileSync(join(h.hostWorkspace, "in.txt"), "one\ntwo\nthree\n");
    const run = JSON.stringify({ command: "bash", args: ["-c", "echo from-terminal; exit 2"] });
    const read = JSON.stringify({ path: `${h.sandbox.workspacePath}/in.txt`, line: 2, limit: 1 });
    expect(await prompt(h, sessionId, `tool execute Run it ${run}\ntool read Read ${read}`)).toEqual({
      stopReason: "end_turn",
    });
    const tools = toolUpdates(h.updates);
    expect(tools.map((u) => u.status)).toEqual([
      "pending",
      "in_progress",
      undefined,
      "completed",
      "pending",
      "in_progress",
      "completed",
    ]);
    expect(tools[2]).toMatchObject({ content: [{ type: "terminal" }] });
    expect(tools[3]).toMatchObject({
      content: [{ type: "content", content: { text: "from-terminal\n" } }],
      rawOutput: { exitCode: 2, output: "from-terminal\n" },
    });
    expect(tools[6]).toMatchObject({ content: [{ type: "content", content: { text: "two\n" } }] });
  });

  it("read, write and run go through the client; a refusal of the client fails the prompt", async () => {
    const h = await launch();
    const sessionId = await started(h);
    const ws = h.sandbox.workspacePath;
    await prompt(h, sessionId, `write ${ws}/w.txt some words\nread ${ws}/w.txt\nrun printf %s-%s a b`);
    expect(said(h.updates)).toBe(`wrote ${ws}/w.txtsome wordsa-b[exit 0]`);
    await expect(prompt(h, sessionId, "write /etc/awaken-fake x")).rejects.toThrow(/outside the workspace/);
  });

  it("slow honours session/cancel with stopReason cancelled; stop and fail end a turn as told; usage reports usage", async () => {
    const h = await launch();
    const sessionId = await started(h);
    const turn = prompt(h, sessionId, "slow 20000\nsay never");
    for (let i = 0; i < 100 && !said(h.updates).includes("working"); i += 1)
      await new Promise((r) => setTimeout(r, 50));
    const before = Date.now();
    await h.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await turn).toEqual({ stopReason: "cancelled" });
    expect(Date.now() - before).toBeLessThan(2000);
    expect(said(h.updates)).toBe("working");
    expect(await prompt(h, sessionId, "stop max_tokens\nsay never")).toEqual({ stopReason: "max_tokens" });
    await expect(prompt(h, sessionId, "fail the model went away")).rejects.toThrow(/the model went away/);
    await prompt(h, sessionId, "usage 5000 100000");
    expect(h.updates.find((u) => u.sessionUpdate === "usage_update")).toMatchObject({
      used: 5000,
      size: 100000,
      cost: { currency: "USD" },
    });
    expect(said(h.updates)).toBe("working");
  });

  it("crash exits the process mid-turn", async () => {
    const h = await launch();
    const sessionId = await started(h);
    const turn = prompt(h, sessionId, "say before\ncrash\nsay after");
    await expect(turn).rejects.toBeDefined();
    expect(await h.process.exited).toBe(137);
    expect(said(h.updates)).toBe("before");
  });

  it("session/load replays the recorded history in a new process, and the session goes on", async () => {
    const first = await launch({ sessionId: "fh_load" });
    const sessionId = await started(first);
    await prompt(first, sessionId, "say remembered\nusage");
    await first.process.kill();
    const second = await launch({ sessionId: "fh_load" });
    await initialize(second);
    await second.connection.agent.request(methods.agent.session.load, {
      sessionId,
      cwd: second.sandbox.workspacePath,
      mcpServers: [],
    });
    expect(second.updates.map((u) => u.sessionUpdate)).toEqual(first.updates.map((u) => u.sessionUpdate));
    expect(said(second.updates)).toBe("remembered");
    expect(await prompt(second, sessionId, "say more")).toEqual({ stopReason: "end_turn" });
    await expect(
      second.connection.agent.request(methods.agent.session.load, {
        sessionId: "../../etc/passwd",
        cwd: second.sandbox.workspacePath,
        mcpServers: [],
      }),
    ).rejects.toMatchObject({ code: -32002 });
  });

  it("FAKE_HARNESS_FAIL_INIT=1 exits at initialize", async () => {
    const h = await launch({ env: { FAKE_HARNESS_FAIL_INIT: "1" } });
    await expect(initialize(h)).rejects.toBeDefined();
    expect(await h.process.exited).toBe(3);
  });

  it("FAKE_HARNESS_DROP_BEFORE_NEW=1 drops the first session/new, then answers once launched again", async () => {
    const env = { FAKE_HARNESS_DROP_BEFORE_NEW: "1" };
    const first = await launch({ sessionId: "fh_drop", env });
    await expect(started(first)).rejects.toBeDefined();
    expect(await first.process.exited).toBe(4);
    const second = await launch({ sessionId: "fh_drop", env });
    expect(await started(second)).toMatch(/^fake_/);
    expect(readFileSync(join(second.hostWorkspace, ".fake-harness/drops"), "utf8")).toBe("1");
  });

  it.skipIf(!hasBwrap)("runs inside bubblewrap: a turn that edits and runs a command", async () => {
    const h = await launch({ tier: "bwrap" });
    const sessionId = await started(h);
    const ws = h.sandbox.workspacePath;
    const edit = JSON.stringify({ path: `${ws}/b.txt`, content: "in bwrap\n" });
    await prompt(h, sessionId, `tool edit Write ${edit}\nrun cat ${ws}/b.txt`);
    expect(said(h.updates)).toBe("in bwrap\n[exit 0]");
    expect(readFileSync(join(h.hostWorkspace, "b.txt"), "utf8")).toBe("in bwrap\n");
  });
});
