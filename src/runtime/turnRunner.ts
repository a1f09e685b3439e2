import type { McpServer } from "../control/agentDefinition.js";
import type { CommitRejection, RunOutcome } from "../coordinator/commitOperation.js";
import {
  type EnvironmentConfig,
  sandboxProvisioningOf,
  sandboxTierOf,
} from "../coordinator/environmentConfig.js";
import type { CommittedFact, Fact } from "../coordinator/facts.js";
import type { Activation, CredentialOpening } from "../coordinator/ports.js";
import { sleep } from "../kernel/clock.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import { type ModelResponse, ProviderError } from "../providers/ports.js";
import { type Sandbox, type SandboxSpec, SandboxUnavailableError } from "../sandbox/ports.js";
import { buildConversation } from "./conversation.js";
import type { HandToolResult } from "./hand/index.js";
import { type McpCallOutcome, McpConnectAborted, McpServerFailure, McpSessions } from "./mcp/mcpSessions.js";
import {
  idle,
  type ModelSpan,
  providerErrorType,
  responseFacts,
  sessionError,
  spanEnd,
  spanStart,
  statusFact,
} from "./modelFacts.js";
import { nextStep, type Step } from "./nextStep.js";
import type { RuntimePorts, TurnOutcome } from "./ports.js";
import { retryDelayMs } from "./retryPolicy.js";
import { SecretEgress } from "./secretEgress.js";
import { StallGuard } from "./stallGuard.js";
import { addMcpTools, type CatalogEntry, mcpServersOf, toolCatalog } from "./toolCatalog.js";
import {
  indeterminateText,
  mcpToolResult,
  SANDBOX_REALIZED,
  sandboxRealized,
  toolExecution,
  toolResult,
} from "./toolFacts.js";
import { usageTotals } from "./usageTotals.js";

type CommitStatus = "ok" | "conflict" | "lost";

const MAX_OUTPUT_TOKENS = 4096;

/**
 * Runs one claimed activation until the run settles or the claim is lost. Every decision is taken
 * from committed facts (`nextStep`), every change goes through the commit fence, and a rejected
 * commit means another owner (or a cancel) took over: the runner stops without side effects.
 */
export class TurnRunner {
  private facts: CommittedFact[] = [];
  private version = 0;
  private readonly catalog: Map<string, CatalogEntry>;
  private sandboxRecorded = false;
  /** The agent's MCP servers; connected (and their tools catalogued) when the run first needs them. */
  private readonly mcpServers: McpServer[];
  private mcp: McpSessions | null = null;
  private mcpReady = false;
  /** The session's `environment_variable` credentials: the sandbox's proxy opens them through it. */
  private readonly secrets: SecretEgress;

  constructor(
    private readonly activation: Activation,
    private readonly ports: RuntimePorts,
    private readonly signal: AbortSignal,
  ) {
    this.catalog = toolCatalog(activation.agent.definition, activation.environment.config);
    this.mcpServers = mcpServersOf(activation.agent.definition);
    this.secrets = new SecretEgress(ports, activation, signal);
  }

  async run(): Promise<TurnOutcome> {
    try {
      return await this.runTurns();
    } finally {
      // MCP connections live as long as the run that opened them (their credential with them);
      // so does the egress proxy's way to open this session's secrets.
      this.secrets.close();
      await this.mcp?.close();
    }
  }

  private async runTurns(): Promise<TurnOutcome> {
    // The claim delivered the committed history. Anything committed since is caught up by the first
    // commit's version check, so no read is needed here.
    for (const fact of this.activation.history) {
      this.facts.push(fact);
      this.version = fact.seq;
    }
    if (this.activation.crashCount > this.ports.crashBudget) {
      const now = this.ports.clock.now();
      // A request a dead owner left open is closed in the same commit, so it never dangles into
      // the session's next turn.
      const step = nextStep(this.facts);
      const close =
        step.kind === "close_dangling_request"
          ? [spanEnd(this.danglingSpan(step.startId), now, null, true)]
          : [];
      const status = await this.commitLanding(
        [
          ...close,
          sessionError(
            now,
            "unknown_error",
            `the run was interrupted by ${this.activation.crashCount} worker crashes without progress; it was stopped`,
            "exhausted",
          ),
          idle(now, { type: "retries_exhausted" }),
        ],
        "failed",
      );
      return status === "ok" ? "settled" : "lost_claim";
    }
    const provisioned = await this.provisionEagerly();
    if (provisioned !== "ok") return provisioned === "failed" ? "settled" : "lost_claim";
    for (;;) {
      if (this.signal.aborted) return "lost_claim";
      const step = nextStep(this.facts);
      const now = this.ports.clock.now();
      let status: CommitStatus;
      switch (step.kind) {
        case "close_dangling_request":
          // The previous owner died mid-request: record the request as failed, then ask again.
          status = await this.commit([spanEnd(this.danglingSpan(step.startId), now, null, true)]);
          break;
        case "run_tool": {
          if (step.mcpServerName !== undefined) {
            const ready = await this.ensureMcp([
              mcpToolResult(
                now,
                step.toolUseId,
                [
                  {
                    type: "text",
                    text: `MCP server ${step.mcpServerName} is unavailable; the call did not run.`,
                  },
                ],
                true,
              ),
            ]);
            if (ready !== "ok") return ready === "lost" ? "lost_claim" : "settled";
          }
          const result = await this.runTool(step);
          if (result === "lost") return "lost_claim";
          status = result;
          break;
        }
        case "await":
          status = await this.commit(
            [idle(now, { type: "requires_action", event_ids: step.eventIds })],
            "awaiting",
          );
          if (status === "ok") return "settled";
          break;
        case "finish":
          status = await this.commit([idle(now, { type: "end_turn" })], "done");
          if (status === "ok") return "settled";
          break;
        case "call_model": {
          const ready = await this.ensureMcp([]);
          if (ready !== "ok") return ready === "lost" ? "lost_claim" : "settled";
          const result = await this.callModel(step.failedAttempts);
          if (result === "settled" || result === "lost_claim") return result;
          status = "ok";
          break;
        }
      }
      if (status === "lost") return "lost_claim";
    }
  }

  private async callModel(failedAttempts: number): Promise<TurnOutcome | "continue"> {
    const model = this.model();
    const provider = this.ports.providers.select(model);
    const span: ModelSpan = {
      startId: newId("sevt", this.ports.clock.now()),
      provider: provider.name,
      model,
    };
    const started = await this.commit([spanStart(span)]);
    if (started === "lost") return "lost_claim";
    if (started === "conflict") return "continue";

    const messageId = newId("sevt", this.ports.clock.now());
    const textIndexes = new Map<number, number>();
    let response: ModelResponse;
    const guard = new StallGuard(this.signal, this.ports.modelIdleTimeoutMs);
    try {
      response = await provider.complete(
        {
          model,
          system: this.activation.agent.definition.system,
          messages: buildConversation(this.facts),
          tools: [...this.catalog.values()].map((entry) => entry.spec),
          maxTokens: MAX_OUTPUT_TOKENS,
        },
        {
          signal: guard.signal,
          onEvent: (event) => {
            guard.touch();
            let index = textIndexes.get(event.index);
            if (index === undefined) {
              index = textIndexes.size;
              textIndexes.set(event.index, index);
              if (index === 0) {
                this.ports.publish(this.activation.sessionId, {
                  kind: "event_start",
                  eventId: messageId,
                  eventType: "agent.message",
                });
              }
            }
            this.ports.publish(this.activation.sessionId, {
              kind: "event_delta",
              eventId: messageId,
              index,
              text: event.text,
            });
          },
        },
      );
    } catch (error) {
      if (textIndexes.size > 0)
        this.ports.publish(this.activation.sessionId, { kind: "event_abandoned", eventId: messageId });
      if (this.signal.aborted) return "lost_claim";
      const cause = guard.stalled
        ? new ProviderError(
            "request_failed",
            `the model stream sent nothing for ${Math.round(this.ports.modelIdleTimeoutMs / 1000)} s`,
            { transient: true, cause: error },
          )
        : error;
      return this.handleModelError(span, failedAttempts, cause);
    } finally {
      guard.dispose();
    }

    const now = this.ports.clock.now();
    const plan = responseFacts(response, messageId, now, this.catalog);
    const output = plan.facts;
    const end = spanEnd(span, now, response.usage, false);
    const body = [...output, end];
    const usage = usageTotals([
      ...this.facts,
      { ...end, sessionId: "", threadId: "", seq: 0, createdAt: now },
    ]);
    body.push(statusFact(now, "session.usage", { usage: usage as unknown as JsonObject }));
    if (plan.serverRuns > 0 || plan.denied > 0) {
      // Work for the server first (run the allowed calls, or let the model read its denials); the
      // loop finds it in the committed facts and parks on client answers afterwards.
      const landed = await this.commitLanding(body);
      return landed === "lost" ? "lost_claim" : "continue";
    }
    // Parking commits the ticket (the tool uses and what each awaits) with the awaiting settle, in
    // one transaction, before any stream or client can see the request.
    const terminal =
      plan.awaiting.length > 0
        ? {
            fact: idle(now, { type: "requires_action", event_ids: plan.awaiting }),
            settle: "awaiting" as const,
          }
        : response.stopReason === "refusal"
          ? { fact: idle(now, { type: "refusal" }), settle: "done" as const }
          : { fact: idle(now, { type: "end_turn" }), settle: "done" as const };
    const committed = await this.commit([...body, terminal.fact], terminal.settle);
    if (committed === "ok") return "settled";
    if (committed === "lost") return "lost_claim";
    // New input arrived while the model answered. The answer is still true history: rebase it onto
    // the new version without the terminal part, and let the loop decide what comes next.
    const rebased = await this.commitLanding(body);
    return rebased === "lost" ? "lost_claim" : "continue";
  }

  /**
   * One Hand tool call, made safe against crashes: its intent (with the attempt number) is
   * committed before it runs and its result after. A call an earlier owner started and never
   * finished is run again only when the tool is repeatable; otherwise the model is told its outcome
   * is unknown (DESIGN.md §3). After a lost claim the sandbox command is killed and nothing is
   * written back.
   */
  private async runTool(step: Extract<Step, { kind: "run_tool" }>): Promise<CommitStatus> {
    if (step.mcpServerName !== undefined) return this.runMcpTool(step, step.mcpServerName);
    const entry = this.catalog.get(step.name);
    const now = this.ports.clock.now();
    if (entry?.kind !== "hand") {
      return this.commitLanding([
        toolResult(now, step.toolUseId, `the ${step.name} tool is not available to this session`, true),
      ]);
    }
    if (step.attempts > 0 && !entry.tool.repeatable) {
      this.ports.log.warn(
        { runId: this.activation.runId, toolUseId: step.toolUseId, tool: step.name },
        "tool call interrupted by a crash is not repeatable; reporting it as indeterminate",
      );
      return this.commitLanding([toolResult(now, step.toolUseId, indeterminateText(step.name), true)]);
    }
    // A conflict here means new input (say an interrupt) landed first: decide again from it.
    const started = await this.commit([toolExecution(now, step.toolUseId, step.attempts + 1)]);
    if (started !== "ok") return started;

    let outcome: HandToolResult;
    let realized: Fact | null = null;
    try {
      const provisioned = await this.provision();
      realized = provisioned.fact;
      outcome = await entry.tool.run(provisioned.sandbox, step.input, this.signal);
    } catch (error) {
      if (this.signal.aborted) return "lost";
      const message = error instanceof Error ? error.message : String(error);
      this.ports.log.warn({ runId: this.activation.runId, tool: step.name, error: message }, "tool failed");
      outcome = {
        text:
          error instanceof SandboxUnavailableError
            ? `the sandbox for this session could not be started: ${message}`
            : `the ${step.name} tool failed: ${message}`,
        isError: true,
      };
    }
    if (this.signal.aborted) return "lost";
    const finishedAt = this.ports.clock.now();
    const result = toolResult(finishedAt, step.toolUseId, outcome.text, outcome.isError);
    // Credentials the sandbox could not use (credential_host_unreachable_error) follow the result.
    const errors = this.secrets.takeErrors(finishedAt, this.facts);
    return this.commitLanding([...(realized ? [realized] : []), result, ...errors]);
  }

  /**
   * Connects the agent's MCP servers (once per run) and adds their tools to the catalog. The
   * connection is the holder of its server's pinned credential, opened through admission only now
   * and never after the claim was lost. A server that cannot be reached or refuses the credential
   * ends the turn cleanly: `session.error` with its `mcp_server_name`, then idle (`closing` first,
   * e.g. the error result of the call that needed it).
   */
  private async ensureMcp(closing: Fact[]): Promise<"ok" | "lost" | "failed"> {
    if (this.mcpReady || this.mcpServers.length === 0) return "ok";
    this.mcp ??= new McpSessions((server) => this.openCredential(server), this.signal);
    try {
      for (const server of this.mcpServers) {
        this.admitMcpEgress(server);
        const tools = await this.mcp.connect(server);
        const skipped = addMcpTools(this.catalog, this.activation.agent.definition, server.name, tools);
        if (skipped.length > 0) {
          this.ports.log.warn(
            { runId: this.activation.runId, mcpServer: server.name, tools: skipped },
            "MCP tools not offered: another tool of the agent has the same name",
          );
        }
      }
      this.mcpReady = true;
      return "ok";
    } catch (error) {
      if (error instanceof McpConnectAborted || this.signal.aborted) return "lost";
      if (!(error instanceof McpServerFailure)) throw error;
      this.ports.log.warn(
        { runId: this.activation.runId, mcpServer: error.serverName, type: error.type, error: error.message },
        "MCP server unavailable",
      );
      const now = this.ports.clock.now();
      const status = await this.commitLanding(
        [
          ...closing,
          sessionError(now, error.type, error.message, "exhausted", { mcp_server_name: error.serverName }),
          idle(now, { type: "retries_exhausted" }),
        ],
        "failed",
      );
      return status === "ok" ? "failed" : "lost";
    }
  }

  /**
   * A `limited` environment reaches only what it lists: an MCP server needs `allow_mcp_servers`, or
   * its host in `allowed_hosts` (wire §2.4). Checked before any credential is opened.
   */
  private admitMcpEgress(server: McpServer): void {
    const config = this.environment();
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

  private async openCredential(server: McpServer): Promise<CredentialOpening> {
    const custody = this.ports.credentials;
    if (!custody) return { kind: "none" };
    const a = this.activation;
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

  /**
   * One MCP call, with the Hand tools' crash discipline: intent before, result after. MCP calls
   * act on a remote system, so one an earlier owner started is run again only when its server
   * annotates the tool `idempotentHint: true`; otherwise the model is told its outcome is unknown.
   */
  private async runMcpTool(step: Extract<Step, { kind: "run_tool" }>, server: string): Promise<CommitStatus> {
    const now = this.ports.clock.now();
    const text = (t: string) => [{ type: "text", text: t }];
    let entry: Extract<CatalogEntry, { kind: "mcp" }> | null = null;
    for (const e of this.catalog.values()) {
      if (e.kind === "mcp" && e.server === server && e.tool === step.name) entry = e;
    }
    if (!entry || !this.mcp) {
      return this.commitLanding([
        mcpToolResult(
          now,
          step.toolUseId,
          text(`the ${step.name} tool of MCP server ${server} is not available to this session`),
          true,
        ),
      ]);
    }
    if (step.attempts > 0 && !entry.repeatable) {
      this.ports.log.warn(
        { runId: this.activation.runId, toolUseId: step.toolUseId, tool: step.name, mcpServer: server },
        "MCP call interrupted by a crash is not idempotent; reporting it as indeterminate",
      );
      return this.commitLanding([
        mcpToolResult(now, step.toolUseId, text(indeterminateText(step.name)), true),
      ]);
    }
    const started = await this.commit([toolExecution(now, step.toolUseId, step.attempts + 1)]);
    if (started !== "ok") return started;
    let outcome: McpCallOutcome;
    try {
      outcome = await this.mcp.call(server, entry.tool, step.input);
    } catch (error) {
      if (this.signal.aborted) return "lost";
      const message = error instanceof Error ? error.message : String(error);
      this.ports.log.warn(
        { runId: this.activation.runId, tool: step.name, mcpServer: server, error: message },
        "MCP call failed",
      );
      outcome = {
        content: text(`the ${step.name} tool of MCP server ${server} failed: ${message}`),
        isError: true,
      };
    }
    if (this.signal.aborted) return "lost";
    return this.commitLanding([
      mcpToolResult(this.ports.clock.now(), step.toolUseId, outcome.content, outcome.isError),
    ]);
  }

  /**
   * The session's sandbox. The first realization the history has not recorded yet comes with an
   * internal fact carrying its latency, so sandbox start-up is measured apart from the tool's own
   * time and from session creation (one per session, whichever worker realized it).
   */
  private async provision(): Promise<{ sandbox: Sandbox; fact: Fact | null }> {
    const spec = await this.secrets.withCredentials(this.sandboxSpec());
    const started = performance.now();
    const sandbox = await this.ports.sandboxes.realize(spec);
    if (this.facts.some((f) => f.type === SANDBOX_REALIZED) || this.sandboxRecorded)
      return { sandbox, fact: null };
    this.sandboxRecorded = true;
    const ms = Math.round((performance.now() - started) * 100) / 100;
    this.ports.log.info({ sessionId: spec.sessionId, tier: spec.tier, ms }, "sandbox realized");
    return {
      sandbox,
      fact: sandboxRealized(
        this.ports.clock.now(),
        spec.tier,
        sandboxProvisioningOf(this.environment()) ?? "on_tool_use",
        ms,
      ),
    };
  }

  /**
   * `eager` provisioning: the sandbox exists before the model or any tool runs (realizing is
   * idempotent, so a resumed run just finds it). A tier that cannot be realized ends the run with
   * a clear error instead of running without its sandbox.
   */
  private async provisionEagerly(): Promise<"ok" | "lost" | "failed"> {
    const config = this.environment();
    if (config.type !== "cloud" || sandboxProvisioningOf(config) !== "eager") return "ok";
    try {
      const { fact } = await this.provision();
      if (!fact) return "ok";
      return (await this.commitLanding([fact])) === "ok" ? "ok" : "lost";
    } catch (error) {
      if (this.signal.aborted) return "lost";
      const message = error instanceof Error ? error.message : String(error);
      const now = this.ports.clock.now();
      const status = await this.commitLanding(
        [
          sessionError(
            now,
            "unknown_error",
            `the session's sandbox could not be started: ${message}`,
            "terminal",
          ),
          idle(now, { type: "retries_exhausted" }),
        ],
        "failed",
      );
      return status === "ok" ? "failed" : "lost";
    }
  }

  private environment(): EnvironmentConfig {
    return this.activation.environment.config;
  }

  /** The sandbox the pinned environment revision asks for (the catalog offers Hand tools only in cloud). */
  private sandboxSpec(): SandboxSpec {
    const config = this.activation.environment.config;
    if (config.type !== "cloud") throw new Error("Hand tools run only in cloud environments");
    return {
      tier: sandboxTierOf(config) ?? "bwrap",
      sessionId: this.activation.sessionId,
      networking:
        config.networking.type === "limited"
          ? {
              type: "limited",
              allowed_hosts: [...config.networking.allowed_hosts],
              allow_package_managers: config.networking.allow_package_managers,
            }
          : { type: "unrestricted" },
      // Prepared on the worker's host before the sandbox starts (a marker check once prepared).
      packages: {
        apt: config.packages.apt,
        cargo: config.packages.cargo,
        gem: config.packages.gem,
        go: config.packages.go,
        npm: config.packages.npm,
        pip: config.packages.pip,
      },
    };
  }

  private async handleModelError(
    span: ModelSpan,
    failedAttempts: number,
    error: unknown,
  ): Promise<TurnOutcome | "continue"> {
    const providerError = error instanceof ProviderError ? error : null;
    const message = error instanceof Error ? error.message : String(error);
    const type = providerErrorType(providerError);
    const now = this.ports.clock.now();
    const attempt = failedAttempts + 1;
    this.ports.log.warn({ runId: this.activation.runId, attempt, error: message }, "model request failed");
    if (providerError?.transient && attempt <= this.ports.retry.maxRetries) {
      const status = await this.commitLanding([
        spanEnd(span, now, null, true),
        sessionError(now, type, message, "retrying"),
        statusFact(now, "session.status_rescheduled"),
      ]);
      if (status === "lost") return "lost_claim";
      await sleep(retryDelayMs(this.ports.retry, attempt), this.signal);
      if (this.signal.aborted) return "lost_claim";
      const resumed = await this.commitLanding([
        statusFact(this.ports.clock.now(), "session.status_running"),
      ]);
      return resumed === "lost" ? "lost_claim" : "continue";
    }
    const status = await this.commitLanding(
      [
        spanEnd(span, now, null, true),
        sessionError(now, type, message, "exhausted"),
        idle(now, { type: "retries_exhausted" }),
      ],
      "failed",
    );
    return status === "ok" ? "settled" : "lost_claim";
  }

  /**
   * Commits facts that record what already happened (a failure, a finished answer, a status
   * change), which stay true whatever input was appended meanwhile: a version conflict is not a
   * reason to drop them, so they are retried on the new version until they land or the claim is lost.
   */
  private async commitLanding(facts: Fact[], settle?: RunOutcome): Promise<"ok" | "lost"> {
    for (;;) {
      const status = await this.commit(facts, settle);
      if (status !== "conflict") return status;
    }
  }

  /**
   * One fenced commit. The operation id is derived from the run and the expected version, so a
   * retry after a lost response is recognised by the store and answered with the original receipt.
   */
  private async commit(facts: Fact[], settle?: RunOutcome): Promise<CommitStatus> {
    const op = {
      opId: `op_${this.activation.runId}_v${this.version}`,
      runId: this.activation.runId,
      threadId: this.activation.threadId,
      owner: this.activation.owner,
      epoch: this.activation.epoch,
      expectedVersion: this.version,
      facts,
      ...(settle ? { settle } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.ports.commit(op);
        if (result.ok) {
          if (!result.duplicate && result.receipt.versionAfter === op.expectedVersion + facts.length) {
            // Our facts landed exactly at the expected version: we know the history without a read.
            this.adopt(op.facts, result.receipt.committedAt);
          } else {
            await this.catchUp();
          }
          return "ok";
        }
        return this.rejected(result.rejection);
      } catch (error) {
        // Transport or database trouble: the commit may or may not have happened. Retrying the
        // same operation is safe (same id, same hash).
        if (attempt >= 5 || this.signal.aborted) throw error;
        this.ports.log.warn({ runId: op.runId, attempt, error: String(error) }, "commit failed; retrying");
        await sleep(100 * 2 ** attempt, this.signal);
      }
    }
  }

  private async rejected(rejection: CommitRejection): Promise<CommitStatus> {
    if (rejection.kind === "version_conflict") {
      await this.catchUp();
      return "conflict";
    }
    this.ports.log.info({ runId: this.activation.runId, rejection }, "claim lost; abandoning run");
    return "lost";
  }

  private adopt(facts: Fact[], committedAt: number): void {
    for (const fact of facts) {
      this.version += 1;
      this.facts.push({
        ...fact,
        sessionId: this.activation.sessionId,
        threadId: this.activation.threadId,
        seq: this.version,
        createdAt: committedAt,
      });
    }
  }

  private async catchUp(): Promise<void> {
    const fresh = await this.ports.readThread(this.activation.threadId, this.version);
    for (const fact of fresh) {
      this.facts.push(fact);
      this.version = fact.seq;
    }
  }

  /** The span a dead owner opened, named as its start recorded it. */
  private danglingSpan(startId: string): ModelSpan {
    const start = this.facts.find((fact) => fact.id === startId);
    const provider = start?.body.provider;
    const model = start?.body.model;
    return {
      startId,
      provider: typeof provider === "string" ? provider : "unknown",
      model: typeof model === "string" ? model : this.model(),
    };
  }

  private model(): string {
    return this.activation.agent.definition.model.id;
  }
}
