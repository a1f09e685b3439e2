/**
 * Starting a stdio MCP server for a run: in the session's own sandbox (its tier, realized like
 * for a Hand tool: stdio servers are a local-state need), with its vault secrets opened through
 * admission (holder `mcp_process`, under this run's claim) for that one start and handed to the
 * process's environment only. Kept apart from the MCP step because it is where a run's sandbox and
 * its credentials meet a process the agent's author chose.
 */

import type { StdioMcpServer } from "../control/agentDefinition.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";
import { scrub } from "../kernel/secretScrub.js";
import type { Sandbox } from "../sandbox/ports.js";
import {
  type LaunchedProcess,
  McpConnectAborted,
  type McpErrorType,
  McpServerFailure,
  STDERR_BYTES,
} from "./mcp/mcpSessions.js";
import { openPinnedSecret } from "./pinnedSecret.js";
import type { RunContext } from "./runContext.js";
import type { SandboxProvisioning } from "./sandboxProvisioning.js";

export class McpStdioLaunch {
  /** The sandbox's first-realization fact, committed with the outcome of the connections. */
  private facts: TypedFact[] = [];

  constructor(
    private readonly run: RunContext,
    private readonly provisioning: SandboxProvisioning,
  ) {}

  /** Facts to commit with the connections' outcome (then forgotten). */
  takeFacts(): TypedFact[] {
    const facts = this.facts;
    this.facts = [];
    return facts;
  }

  readonly launch = async (server: StdioMcpServer): Promise<LaunchedProcess> => {
    if (this.run.environment().type !== "cloud") {
      throw failure(
        "mcp_connection_failed_error",
        server,
        "stdio MCP servers run in the session's sandbox, and a self_hosted environment has none here; " +
          "declare the server by url, or use a cloud environment",
      );
    }
    const sandbox = await this.sandbox(server);
    const { env, secrets } = await this.environment(server);
    if (this.run.signal.aborted) throw new McpConnectAborted();
    try {
      const process = await sandbox.spawn({
        argv: [server.command, ...server.args],
        env,
        maxStderrBytes: STDERR_BYTES,
        signal: this.run.signal,
      });
      return { process, secrets };
    } catch (error) {
      if (this.run.signal.aborted) throw new McpConnectAborted();
      throw failure(
        "mcp_connection_failed_error",
        server,
        `its process could not be started in the session's sandbox: ${scrub(messageOf(error), secrets)}`,
      );
    }
  };

  private async sandbox(server: StdioMcpServer): Promise<Sandbox> {
    try {
      const { sandbox, fact } = await this.provisioning.provision();
      if (fact) this.facts.push(fact);
      return sandbox;
    } catch (error) {
      if (this.run.signal.aborted) throw new McpConnectAborted();
      throw failure(
        "mcp_connection_failed_error",
        server,
        `the session's sandbox could not be started: ${messageOf(error)}`,
      );
    }
  }

  /** The process's variables: text as stored, vault references opened now (and only now). */
  private async environment(
    server: StdioMcpServer,
  ): Promise<{ env: Record<string, string>; secrets: string[] }> {
    const env: Record<string, string> = {};
    const secrets: string[] = [];
    for (const [name, value] of Object.entries(server.env)) {
      if (typeof value === "string") {
        env[name] = value;
        continue;
      }
      const secret = await this.openSecret(server, name, value.secret_name);
      env[name] = secret;
      secrets.push(secret);
    }
    return { env, secrets };
  }

  private async openSecret(server: StdioMcpServer, variable: string, secretName: string): Promise<string> {
    const opened = await openPinnedSecret(this.run, "mcp_process", secretName, `env.${variable}`);
    if (opened.kind === "value") return opened.value;
    if (opened.kind === "lost") throw new McpConnectAborted();
    throw failure(
      opened.reason === "auth" ? "mcp_authentication_failed_error" : "mcp_connection_failed_error",
      server,
      opened.message,
    );
  }
}

function failure(type: McpErrorType, server: StdioMcpServer, why: string): McpServerFailure {
  return new McpServerFailure(type, server.name, `stdio MCP server ${server.name}: ${why}`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
