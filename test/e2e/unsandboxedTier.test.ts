import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { SandboxUnavailableError } from "../../src/sandbox/ports.js";
import { createSandboxes } from "../../src/sandbox/sandboxes.js";
import { history, isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

/**
 * Tier "none" runs built-in tools as the server's own user (its data dir, its master key in
 * reach): an operator's decision (`--allow-unsandboxed-tier`), never an API key holder's.
 */

const KEY = "sk-awaken-unsandboxed-test";
const NONE = { type: "cloud", sandbox: { tier: "none" } } as never;
const dirs: string[] = [];
const servers: RunningServer[] = [];

const processes: ServerProcess[] = [];

afterEach(async () => {
  for (const p of processes.splice(0)) {
    p.child.kill("SIGTERM");
    await p.exited;
  }
  for (const server of servers.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-unsandboxed-"));
  dirs.push(dir);
  return dir;
}

async function start(dir: string, allowWeakerTiers: boolean): Promise<Anthropic> {
  const server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir: dir,
      workers: 1,
      workerPollMs: 50,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: KEY,
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      allowWeakerTiers,
      env: {},
    },
    pino({ level: "silent" }),
  );
  servers.push(server);
  return new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
}

async function stopAll(): Promise<void> {
  for (const server of servers.splice(0)) await server.stop();
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as InstanceType<typeof Anthropic.APIError> | null;
  expect(error, "the request was accepted").toBeInstanceOf(Anthropic.APIError);
  const body = error!.error as { error?: { message?: string } } | undefined;
  return { status: error!.status as number, message: body?.error?.message ?? error!.message };
}

const HOW_TO_ENABLE = /--allow-unsandboxed-tier or AWAKEN_ALLOW_UNSANDBOXED_TIER=1/;

describe('sandbox tier "none" is an operator decision', () => {
  it("is refused by default at environment create and update, with a 400 saying how an operator enables it", async () => {
    const client = await start(dataDir(), false);
    const created = await refusal(client.beta.environments.create({ name: "open", config: NONE }));
    expect(created.status).toBe(400);
    expect(created.message).toContain('config.sandbox.tier: the "none" tier runs built-in tools as');
    expect(created.message).toMatch(HOW_TO_ENABLE);

    // The default (bwrap) is fine, and cannot be weakened by an update either.
    const sandboxed = await client.beta.environments.create({ name: "sandboxed" });
    const updated = await refusal(client.beta.environments.update(sandboxed.id, { config: NONE }));
    expect(updated.status).toBe(400);
    expect(updated.message).toMatch(HOW_TO_ENABLE);
    const after = await client.beta.environments.retrieve(sandboxed.id);
    expect(after.config).toMatchObject({ sandbox: { tier: "bwrap" } });
  });

  it("is accepted with the operator option, and its sessions run built-in tools", async () => {
    const client = await start(dataDir(), true);
    const environment = await client.beta.environments.create({ name: "open", config: NONE });
    expect(environment.config).toMatchObject({ sandbox: { tier: "none" } });
    const agent = await client.beta.agents.create({
      name: "hands",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage('call bash {"command":"echo unsandboxed"}')],
    });
    const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
    const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
    expect(textOf(result)).toContain("unsandboxed");
  });

  it("a revision stored while it was enabled starts no session once it is off; its existing sessions' tools are refused", async () => {
    const dir = dataDir();
    const before = await start(dir, true);
    const environment = await before.beta.environments.create({ name: "open", config: NONE });
    const agent = await before.beta.agents.create({
      name: "hands",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const existing = await before.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await stopAll();

    const client = await start(dir, false);
    const refused = await refusal(
      client.beta.sessions.create({ agent: agent.id, environment_id: environment.id }),
    );
    expect(refused.status).toBe(400);
    expect(refused.message).toContain(`environment ${environment.id} (revision 1): the "none" tier`);
    expect(refused.message).toMatch(HOW_TO_ENABLE);
    // A rename keeps the revision (no new config): allowed, and still refused for sessions.
    await client.beta.environments.update(environment.id, { name: "renamed" });

    // The session made before: its bash call is refused by the worker, never run unsandboxed.
    await client.beta.sessions.events.send(existing.id, {
      events: [userMessage('call bash {"command":"echo must-not-run"}')],
    });
    const events = await waitForHistory(
      client,
      existing.id,
      (h) => h.some((e) => e.type === "agent.tool_result"),
      15_000,
    );
    const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
    expect(result?.is_error).toBe(true);
    expect(textOf(result)).not.toContain("must-not-run\n");
    expect(textOf(result)).toMatch(HOW_TO_ENABLE);
    expect((await history(client, existing.id)).length).toBeGreaterThan(0);
  });

  it("a worker realizes tier none only with the operator option", async () => {
    const root = dataDir();
    const spec = { tier: "none", sessionId: "s-1", networking: { type: "unrestricted" } } as const;
    const strict = createSandboxes(join(root, "strict"));
    const error = await strict.realize(spec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toMatch(HOW_TO_ENABLE);
    const allowed = createSandboxes(join(root, "allowed"), {}, undefined, true);
    const sandbox = await allowed.realize(spec);
    expect(sandbox.tier).toBe("none");
    await Promise.all([strict.close(), allowed.close()]);
  });

  it("awaken up takes the option as --allow-unsandboxed-tier or AWAKEN_ALLOW_UNSANDBOXED_TIER=1, and warns that it is on", async () => {
    const variants: Array<{ args: string[]; env: NodeJS.ProcessEnv; enabled: boolean }> = [
      { args: [], env: {}, enabled: false },
      { args: ["--allow-unsandboxed-tier"], env: {}, enabled: true },
      { args: [], env: { AWAKEN_ALLOW_UNSANDBOXED_TIER: "1" }, enabled: true },
    ];
    for (const { args, env, enabled } of variants) {
      const p = await startServerProcess({ dataDir: join(dataDir(), "data"), apiKey: KEY, args, env });
      processes.push(p);
      const outcome = await p.client.beta.environments.create({ name: "open", config: NONE }).then(
        () => 201,
        (e: InstanceType<typeof Anthropic.APIError>) => e.status,
      );
      expect(outcome, JSON.stringify(args) + JSON.stringify(env)).toBe(enabled ? 201 : 400);
      expect(/the unsandboxed tier is enabled/.test(p.stderr())).toBe(enabled);
    }
  });
});
