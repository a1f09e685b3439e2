/**
 * The MCP step: the agent's MCP servers for this run (connected once, when the run first needs
 * them), the egress and credential checks before each connection, and one MCP tool call. Kept
 * apart because MCP calls act on a remote system reached with a pinned credential, which gives them
 * their own admission, failure and crash rules.
 */

import type { McpServer, UrlMcpServer } from "../control/agentDefinition.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";
import type { CredentialOpening } from "../coordinator/ports.js";
import { secondsSince } from "../kernel/metrics.js";
import { defaultOutbound } from "../kernel/outboundConnector.js";
import { type McpCallOutcome, McpConnectAborted, McpServerFailure, McpSessions } from "./mcp/mcpSessions.js";
import { tunnelRouted } from "./mcp/tunnelRouting.js";
import { McpStdioLaunch } from "./mcpStdioLaunch.js";
import { idle, sessionError } from "./modelFacts.js";
import type { Step } from "./nextStep.js";
import type { CommitStatus, RunContext } from "./runContext.js";
import type { SandboxProvisioning } from "./sandboxProvisioning.js";
import { addMcpTools, type CatalogEntry, mcpServersOf } from "./toolCatalog.js";
import { indeterminateText, mcpToolResult, toolExecution } from "./toolFacts.js";
import { captureToolArguments, captureToolResult, endToolSpan, startToolSpan } from "./traceSpans.js";

export class McpStep {
  /** The agent's MCP servers; connected (and their tools catalogued) when the run first needs them. */
  private readonly mcpServers: McpServer[];
  private mcp: McpSessions | null = null;
  private mcpReady = false;
  /** Starts stdio servers in the session's sandbox. */
  private readonly stdio: McpStdioLaunch;

  constructor(
    private readonly run: RunContext,
    private readonly catalog: Map<string, CatalogEntry>,
    sandbox: SandboxProvisioning,
  ) {
    this.mcpServers = mcpServersOf(run.activation.agent.definition);
    this.stdio = new McpStdioLaunch(run, sandbox);
  }

  /**
   * Connects the agent's MCP servers (once per run) and adds their tools to the catalog. The
   * connection is the holder of its server's pinned credential, opened through admission only now
   * and never after the claim was lost. A server that cannot be reached or refuses the credential
   * ends the turn cleanly: `session.error` with its `mcp_server_name`, then idle (`closing` first,
   * e.g. the error result of the call that needed it).
   */
  async ensureMcp(closing: TypedFact[]): Promise<"ok" | "lost" | "failed"> {
    if (this.mcpReady || this.mcpServers.length === 0) return "ok";
    this.mcp ??= new McpSessions(
      (server) => this.openCredential(server),
      this.run.signal,
      tunnelRouted(this.run.ports.outbound ?? defaultOutbound(), this.run.ports.tunnels, {
        workspaceId: this.run.activation.workspaceId,
        sessionId: this.run.activation.sessionId,
        runId: this.run.activation.runId,
        owner: this.run.activation.owner,
        epoch: this.run.activation.epoch,
      }),
      this.stdio.launch,
    );
    try {
      for (const server of this.mcpServers) {
        if (server.type === "url") this.admitMcpEgress(server);
        const tools = await this.mcp.connect(server);
        const skipped = addMcpTools(this.catalog, this.run.activation.agent.definition, server.name, tools);
        if (skipped.length > 0) {
          this.run.ports.log.warn(
            { runId: this.run.activation.runId, mcpServer: server.name, tools: skipped },
            "MCP tools not offered: another tool of the agent has the same name",
          );
        }
      }
      this.mcpReady = true;
      // A stdio server realized the session's sandbox: its first realization is recorded.
      const realized = this.stdio.takeFacts();
      if (realized.length > 0 && (await this.run.commit(realized)) !== "ok") return "lost";
      return "ok";
    } catch (error) {
      if (error instanceof McpConnectAborted || this.run.signal.aborted) return "lost";
      if (!(error instanceof McpServerFailure)) throw error;
      this.run.ports.log.warn(
        {
          runId: this.run.activation.runId,
          mcpServer: error.serverName,
          type: error.type,
          error: error.message,
        },
        "MCP server unavailable",
      );
      const now = this.run.ports.clock.now();
      const status = await this.run.commitLanding(
        [
          ...this.stdio.takeFacts(),
          ...closing,
          sessionError(now, error.type, error.message, "exhausted", { mcp_server_name: error.serverName }),
          idle(now, { kind: "retries_exhausted" }),
        ],
        "failed",
      );
      return status === "ok" ? "failed" : "lost";
    }
  }

  /**
   * One MCP call, with the Hand tools' crash discipline: intent before, result after. MCP calls
   * act on a remote system, so one an earlier owner started is run again only when its server
   * annotates the tool `idempotentHint: true`; otherwise the model is told its outcome is unknown.
   */
  async runMcpTool(step: Extract<Step, { kind: "run_tool" }>, server: string): Promise<CommitStatus> {
    const now = this.run.ports.clock.now();
    const text = (t: string) => [{ type: "text", text: t }];
    let entry: Extract<CatalogEntry, { kind: "mcp" }> | null = null;
    for (const e of this.catalog.values()) {
      if (e.kind === "mcp" && e.server === server && e.tool === step.name) entry = e;
    }
    if (!entry || !this.mcp) {
      return this.run.commitLanding([
        mcpToolResult(
          now,
          step.toolUseId,
          text(`the ${step.name} tool of MCP server ${server} is not available to this session`),
          true,
        ),
      ]);
    }
    if (step.attempts > 0 && !entry.repeatable) {
      this.run.ports.log.warn(
        { runId: this.run.activation.runId, toolUseId: step.toolUseId, tool: step.name, mcpServer: server },
        "MCP call interrupted by a crash is not idempotent; reporting it as indeterminate",
      );
      this.run.metrics.toolCall("mcp", "indeterminate");
      return this.run.commitLanding([
        mcpToolResult(now, step.toolUseId, text(indeterminateText(step.name)), true),
      ]);
    }
    const started = await this.run.commit([toolExecution(now, step.toolUseId, step.attempts + 1)]);
    if (started !== "ok") return started;
    let outcome: McpCallOutcome;
    const startedAt = performance.now();
    const traced = startToolSpan(this.run.ports.tracing, entry.tool, "extension", step.toolUseId);
    traced?.setAttributes({ "awaken.mcp.server": server });
    const captured = this.run.capturesContent ? traced : undefined;
    captureToolArguments(captured, step.input);
    try {
      outcome = await this.mcp.call(server, entry.tool, step.input);
    } catch (error) {
      if (this.run.signal.aborted) {
        endToolSpan(traced, "aborted");
        return "lost";
      }
      const message = error instanceof Error ? error.message : String(error);
      this.run.ports.log.warn(
        { runId: this.run.activation.runId, tool: step.name, mcpServer: server, error: message },
        "MCP call failed",
      );
      outcome = {
        content: text(`the ${step.name} tool of MCP server ${server} failed: ${message}`),
        isError: true,
      };
    }
    captureToolResult(captured, outcome.content);
    endToolSpan(traced, this.run.signal.aborted ? "aborted" : outcome.isError ? "error" : "ok");
    if (this.run.signal.aborted) return "lost";
    this.run.metrics.toolCall("mcp", outcome.isError ? "error" : "ok", secondsSince(startedAt));
    return this.run.commitLanding([
      mcpToolResult(this.run.ports.clock.now(), step.toolUseId, outcome.content, outcome.isError),
    ]);
  }

  /** Closes the run's MCP connections (and with them their credential); none opened, nothing to await. */
  close(): Promise<void> | undefined {
    return this.mcp?.close();
  }

  /**
   * A `limited` environment reaches only what it lists: an MCP server needs `allow_mcp_servers`, or
   * its host in `allowed_hosts` (wire §2.4). Checked before any credential is opened.
   */
  private admitMcpEgress(server: UrlMcpServer): void {
    const config = this.run.environment();
    if (config.type !== "cloud" || config.networking.type !== "limited") return;
    if (config.networking.allow_mcp_servers) return;
    const url = new URL(server.url);
    const allowed = config.networking.allowed_hosts;
    if (allowed.includes(url.hostname) || allowed.includes(url.host)) return;
    throw new McpServerFailure(
      "mcp_connection_failed_error",
      server.name,
      `the environment's networking is limited and does not allow MCP server ${server.name} (${url.host}): ` +
        "set allow_mcp_servers, or list the host in allowed_hosts",
    );
  }

  private async openCredential(server: UrlMcpServer): Promise<CredentialOpening> {
    const custody = this.run.ports.credentials;
    if (!custody) return { kind: "none" };
    const a = this.run.activation;
    return custody.open({
      workspaceId: a.workspaceId,
      sessionId: a.sessionId,
      runId: a.runId,
      owner: a.owner,
      epoch: a.epoch,
      holder: "mcp_connection",
      mcpServerUrl: server.url,
    });
  }
}
