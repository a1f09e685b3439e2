/**
 * Launching a thread's harness inside the session's sandbox, never on the host: its package must be
 * among the environment's (frozen like any other), its process starts from the workspace with only
 * the variables its runtime names, and the ACP handshake (`initialize`, then `session/load` of the
 * thread's last harness session when the harness can, else `session/new`) must finish before the
 * harness is used. Each stage is committed as it is reached. A harness that drops before its session
 * is made is relaunched once; a second drop fails the launch with the harness's own last words.
 */

import { randomUUID } from "node:crypto";
import { type InitializeResponse, type McpServer, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AcpRuntimeDefinition } from "../../brains/ports.js";
import type { TypedFact } from "../../coordinator/factVocabulary.js";
import { scrub } from "../../kernel/secretScrub.js";
import type { Sandbox } from "../../sandbox/ports.js";
import { openPinnedSecret } from "../pinnedSecret.js";
import type { RunContext } from "../runContext.js";
import type { SandboxProvisioning } from "../sandboxProvisioning.js";
import { type HarnessClientServices, HarnessConnection } from "./harnessConnection.js";
import { type HarnessStage, harnessStage, lastHarnessSession } from "./harnessFacts.js";
import type { HarnessHost, LiveHarness } from "./harnessHost.js";
import { HarnessToolServer, TOOL_SERVER_NAME } from "./harnessToolServer.js";

/** How long the handshake may take: a real harness loads its own runtime first. */
const HANDSHAKE_TIMEOUT_MS = 120_000;
const STDERR_BYTES = 8 * 1024;

/** The launch failed for a reason retrying cannot fix; the words are the run's error. */
export class HarnessLaunchFailure extends Error {}
/** The run's claim was lost during the launch. */
export class HarnessLaunchLost extends Error {}

export type ServicesFactory = (sandbox: Sandbox, signal: AbortSignal) => HarnessClientServices;

export class HarnessLaunch {
  constructor(
    private readonly run: RunContext,
    private readonly provisioning: SandboxProvisioning,
    private readonly host: HarnessHost,
    private readonly services: ServicesFactory,
  ) {}

  /** `offered`: the agent's own tools, served to the harness as an MCP server of its session. */
  async launch(key: string, runtime: AcpRuntimeDefinition, offered: readonly Tool[]): Promise<LiveHarness> {
    const missing = this.missingPackage(runtime);
    await this.stage(
      runtime,
      "installing",
      runtime.package ? { package: `${runtime.package.name}@${runtime.package.version}` } : {},
    );
    if (missing) throw new HarnessLaunchFailure(missing);
    let sandbox: Sandbox;
    let realized: TypedFact | null;
    try {
      ({ sandbox, fact: realized } = await this.provisioning.provision());
    } catch (error) {
      if (this.run.signal.aborted) throw new HarnessLaunchLost();
      throw new HarnessLaunchFailure(`the session's sandbox could not be started: ${messageOf(error)}`);
    }
    const previous = lastHarnessSession(this.run.facts);
    const tools = await this.toolServer(sandbox, offered);
    try {
      return await this.launchIn(key, runtime, sandbox, realized, previous, tools);
    } catch (error) {
      await tools?.server.close();
      throw error;
    }
  }

  /**
   * The tool server for `offered`, on a socket in the sandbox's private directory, and the stdio
   * MCP server entry (a bridge to that socket) the harness's session names. Null: nothing to offer.
   */
  private async toolServer(
    sandbox: Sandbox,
    offered: readonly Tool[],
  ): Promise<{ server: HarnessToolServer; entry: McpServer } | null> {
    if (offered.length === 0) return null;
    if (!sandbox.serveLocal)
      throw new HarnessLaunchFailure(
        `the agent's own tools cannot be offered to a harness in a ${sandbox.tier} sandbox (it has no private directory)`,
      );
    const server = new HarnessToolServer(offered);
    try {
      const argv = await sandbox.serveLocal(`tools-${randomUUID().slice(0, 8)}.sock`, server.listener);
      const [command = "", ...args] = argv;
      return { server, entry: { name: TOOL_SERVER_NAME, command, args, env: [] } };
    } catch (error) {
      await server.close();
      throw new HarnessLaunchFailure(
        `the agent's tools could not be offered to the harness: ${messageOf(error)}`,
      );
    }
  }

  private async launchIn(
    key: string,
    runtime: AcpRuntimeDefinition,
    sandbox: Sandbox,
    realized: TypedFact | null,
    previous: string | null,
    tools: { server: HarnessToolServer; entry: McpServer } | null,
  ): Promise<LiveHarness> {
    const mcpServers = tools ? [tools.entry] : [];
    for (let attempt = 1; ; attempt++) {
      await this.stage(runtime, "launching", { attempt }, realized && attempt === 1 ? [realized] : []);
      const stop = new AbortController();
      let connection: HarnessConnection;
      const { env, secrets } = await this.environment(runtime);
      try {
        const process = await sandbox.spawn({
          argv: [...runtime.command],
          env,
          maxStderrBytes: STDERR_BYTES,
          signal: stop.signal,
          // A harness reaches its model as the session's commands reach the network.
          egress: true,
        });
        connection = new HarnessConnection(process, this.services(sandbox, stop.signal), () => stop.abort());
      } catch (error) {
        if (this.run.signal.aborted) throw new HarnessLaunchLost();
        throw new HarnessLaunchFailure(
          `the ${runtime.name} harness could not be started in the session's sandbox: ${scrub(messageOf(error), secrets)}`,
        );
      }
      await this.stage(runtime, "initializing", { attempt });
      try {
        const ready = await this.handshake(connection, sandbox, previous, mcpServers);
        const live: LiveHarness = {
          runtime,
          connection,
          acpSessionId: ready.sessionId,
          prompt: null,
          promptSeq: 0,
          permission: null,
          tools: tools?.server ?? null,
          toolCall: null,
          folded: new Set(),
          calls: new Map(),
          lastUsed: Date.now(),
        };
        await this.stage(runtime, "ready", {
          acp_session_id: ready.sessionId,
          loaded: ready.loaded,
          ...(ready.agent ? { agent_info: ready.agent } : {}),
        });
        this.host.add(key, live);
        return live;
      } catch (error) {
        // A closed connection usually means the process is going: give its exit a moment to show.
        const exited =
          connection.exited ||
          (await Promise.race([
            connection.process.exited.then(() => true),
            new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000).unref()),
          ]));
        const tail = scrub(connection.process.stderrTail(), secrets).trim().slice(-1_000);
        await connection.close();
        if (this.run.signal.aborted || error instanceof HarnessLaunchLost) throw new HarnessLaunchLost();
        if (exited && attempt === 1) {
          this.run.ports.log.warn(
            { runId: this.run.activation.runId, runtime: runtime.name },
            "the ACP harness dropped during its handshake; relaunching it once",
          );
          continue;
        }
        throw new HarnessLaunchFailure(
          `the ${runtime.name} harness ${exited ? "exited" : "failed"} during its handshake: ${messageOf(error)}` +
            (tail === "" ? "" : ` (its last output: ${tail})`),
        );
      }
    }
  }

  /**
   * The harness's variables: text as the runtime writes them, vault secrets opened now (holder
   * `acp_harness`, under this run's claim) for this one launch and handed to its environment only.
   */
  private async environment(
    runtime: AcpRuntimeDefinition,
  ): Promise<{ env: Record<string, string>; secrets: string[] }> {
    const env: Record<string, string> = {};
    const secrets: string[] = [];
    for (const [name, value] of Object.entries(runtime.env)) {
      if (typeof value === "string") {
        env[name] = value;
        continue;
      }
      const secret = await this.openSecret(runtime, name, value.vault_secret);
      env[name] = secret;
      secrets.push(secret);
    }
    return { env, secrets };
  }

  private async openSecret(
    runtime: AcpRuntimeDefinition,
    variable: string,
    secretName: string,
  ): Promise<string> {
    const usedBy = `the ${runtime.name} harness's ${variable}`;
    const opened = await openPinnedSecret(this.run, "acp_harness", secretName, usedBy);
    if (opened.kind === "value") return opened.value;
    if (opened.kind === "lost") throw new HarnessLaunchLost();
    throw new HarnessLaunchFailure(opened.message);
  }

  /** Why the environment cannot run the runtime's command (null: it can). */
  private missingPackage(runtime: AcpRuntimeDefinition): string | null {
    const wanted = runtime.package;
    if (!wanted) return null;
    const config = this.run.environment();
    if (config.type !== "cloud")
      return `the ${runtime.name} harness runs in the session's sandbox, and a self_hosted environment has none here`;
    const listed = config.packages[wanted.manager].some(
      (entry) => packageNameOf(wanted.manager, entry) === wanted.name.toLowerCase(),
    );
    if (listed) return null;
    return (
      `the ${runtime.name} harness needs the ${wanted.manager} package ${wanted.name}, and the session's environment ` +
      `does not install it: add "${wanted.name}${wanted.manager === "npm" ? "@" : "=="}${wanted.version}" to config.packages.${wanted.manager}`
    );
  }

  private async handshake(
    connection: HarnessConnection,
    sandbox: Sandbox,
    previous: string | null,
    mcpServers: McpServer[],
  ): Promise<{ sessionId: string; loaded: boolean; agent: Record<string, unknown> | null }> {
    const agent = connection.agent;
    const init: InitializeResponse = await this.bounded(
      connection,
      agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
        clientInfo: { name: "awaken", version: "1" },
      }),
      "initialize",
    );
    const info = init.agentInfo ? { name: init.agentInfo.name, version: init.agentInfo.version } : null;
    if (previous !== null && init.agentCapabilities?.loadSession === true) {
      try {
        await this.bounded(
          connection,
          agent.request(methods.agent.session.load, {
            sessionId: previous,
            cwd: sandbox.workspacePath,
            mcpServers,
          }),
          "session/load",
        );
        return { sessionId: previous, loaded: true, agent: info };
      } catch (error) {
        if (connection.exited || this.run.signal.aborted) throw error;
        // A harness that lost its own record of the session starts a new one, primed by the caller.
      }
    }
    const made = await this.bounded(
      connection,
      agent.request(methods.agent.session.new, { cwd: sandbox.workspacePath, mcpServers }),
      "session/new",
    );
    return { sessionId: made.sessionId, loaded: false, agent: info };
  }

  /** A handshake request, cut short by the process's exit, the run's end or the timeout. */
  private async bounded<T>(connection: HarnessConnection, request: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => undefined;
    try {
      return await Promise.race([
        request,
        connection.process.exited.then((code) => {
          throw new Error(`the harness exited (code ${code ?? "signal"}) before answering ${what}`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer to ${what} within ${HANDSHAKE_TIMEOUT_MS / 1000} s`)),
            HANDSHAKE_TIMEOUT_MS,
          );
        }),
        new Promise<never>((_, reject) => {
          if (this.run.signal.aborted) reject(new HarnessLaunchLost());
          this.run.signal.addEventListener("abort", () => reject(new HarnessLaunchLost()), { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      void onAbort;
    }
  }

  private async stage(
    runtime: AcpRuntimeDefinition,
    stage: HarnessStage,
    detail: Record<string, string | number | boolean | Record<string, unknown>>,
    with_: TypedFact[] = [],
  ): Promise<void> {
    const now = this.run.ports.clock.now();
    const status = await this.run.commitLanding([
      ...with_,
      harnessStage(now, runtime.name, stage, detail as never),
    ]);
    if (status === "lost") throw new HarnessLaunchLost();
  }
}

/** A package entry's name as the environment lists it (`name@range`, `@scope/name@x`, `name==x`). */
function packageNameOf(manager: "npm" | "pip", entry: string): string {
  if (manager === "npm") {
    const at = entry.indexOf("@", 1);
    return (at === -1 ? entry : entry.slice(0, at)).toLowerCase();
  }
  return (entry.split(/[=<>!~[ ;]/)[0] ?? "").toLowerCase();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
