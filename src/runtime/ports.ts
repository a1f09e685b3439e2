import type { CommitOperation, CommitResult } from "../coordinator/commitOperation.js";
import type { CommittedFact } from "../coordinator/facts.js";
import type {
  CredentialOpening,
  CredentialOpenRequest,
  LiveEvidence,
  PinnedSecretVariable,
  SecretOpening,
  SecretOpenRequest,
  SecretVariablesRequest,
} from "../coordinator/ports.js";
import type { Clock } from "../kernel/clock.js";
import type { Metrics } from "../kernel/metrics.js";
import type { Outbound } from "../kernel/outboundConnector.js";
import type { PackageResolution } from "../kernel/packageResolution.js";
import type { Tracing } from "../kernel/tracing.js";
import type { ProviderRouter } from "../providers/ports.js";
import type { RunResources } from "../resources/ports.js";
import type { SandboxProvider } from "../sandbox/ports.js";
import type { AcpRuntimePorts } from "./acp/acpBrainStep.js";
import type { TunnelRelayPort } from "./mcp/tunnelRouting.js";
import type { RetryPolicy } from "./retryPolicy.js";

/**
 * What the runtime may touch: committed history (read), the commit fence, live evidence, models,
 * sandboxes.
 */
export interface RuntimePorts {
  readThread(threadId: string, afterSeq: number): Promise<CommittedFact[]>;
  commit(op: CommitOperation): Promise<CommitResult>;
  publish(sessionId: string, evidence: LiveEvidence): void;
  providers: ProviderRouter;
  /** Where Hand tools run: the tier the session's environment revision names, or a refusal. */
  sandboxes: SandboxProvider;
  clock: Clock;
  retry: RetryPolicy;
  /** Crashes (lost claims) a run may suffer between two commits before it is ended. */
  crashBudget: number;
  /** A model stream with no event for this long is aborted and retried as a transient error. */
  modelIdleTimeoutMs: number;
  /** How often an outcome's grader still at work says so (`span.outcome_evaluation_ongoing`); default 10 s. */
  outcomeHeartbeatMs?: number;
  log: RuntimeLog;
  /**
   * Credential custody for last-mile holders (the MCP connections, the sandbox's egress proxy). In
   * process, Control's admission answers directly; on a remote worker, the coordinator answers over
   * the worker transport (`worker/remoteCredentials.ts`) after checking the claim. Absent, holders get no credential and
   * a server that requires one fails the run with `mcp_authentication_failed_error`.
   */
  credentials?: CredentialHolderPort;
  /**
   * How MCP connections reach their servers: the outbound connector with the operator's allow-list
   * of private hosts. Absent, the public-only default (no loopback, private or metadata address).
   */
  outbound?: Outbound;
  /**
   * The coordinator's MCP tunnel relay: MCP URLs in a tunnel's domain go there instead of being
   * dialled. Absent (a remote worker), such a server fails to connect with a clear error.
   */
  tunnels?: TunnelRelayPort;
  /** Operator metrics (model requests, tool calls, commits, settles); absent, nothing is counted. */
  metrics?: Metrics;
  /** Spans for model requests and tool calls, under the worker's run slice; absent, none. */
  tracing?: Tracing;
  /**
   * The operator's ceiling on content in those spans (`AWAKEN_TRACE_CONTENT=on`): content is
   * recorded only when it is true and the claim allowed it (`Activation.captureContent`).
   */
  traceContent?: boolean;
  /**
   * The session's resources and the agent's pinned skills, scoped to the run's claim (in process:
   * claimedResources.ts; on a remote worker, over the transport). Absent: runs see none.
   */
  resources?: RunResources;
  /**
   * The host directory under which this worker materializes each session's mounted resources
   * (`<mountArea>/<sessionId>`), outside every sandbox's writable workspace. Absent: resources that
   * need a mount cannot be realized here and such a run fails with a clear error.
   */
  mountArea?: string;
  /**
   * The Coordinator's record of environment revisions' frozen package resolutions (in process: the
   * environment store; on a remote worker, over the transport behind the run's claim). Absent:
   * packages are installed by range and no run names a resolution.
   */
  packageResolutions?: PackageResolutionPort;
  /**
   * ACP Brains: the runtimes this worker can launch and the harnesses alive on it. Absent, an
   * agent whose model is `acp:<runtime>` fails its turn naming the missing runtime.
   */
  acp?: AcpRuntimePorts;
}

/** Which revision's resolution a run asks for, under its claim (a remote coordinator checks it). */
export interface PackageResolutionRequest {
  workspaceId: string;
  sessionId: string;
  runId: string;
  owner: string;
  epoch: number;
  environmentId: string;
  revision: number;
}

/** An environment revision's frozen package resolution: read it, or record it first-writer-wins. */
export interface PackageResolutionPort {
  recorded(request: PackageResolutionRequest): Promise<PackageResolution | null>;
  /** Answers the resolution recorded after the call: `resolution`, or the one recorded first. */
  record(request: PackageResolutionRequest, resolution: PackageResolution): Promise<PackageResolution>;
}

/** Opens the session's pinned credential for one holder, after admission. Never a replacement. */
export interface CredentialHolderPort {
  open(request: CredentialOpenRequest): Promise<CredentialOpening>;
  /**
   * The session's pinned `environment_variable` credentials, secret-free (names, hosts, injection),
   * from which its sandbox is set up. Named by the run's claim, which a remote worker's coordinator
   * checks before it answers (in process, custody needs only the session). Optional: a port
   * without it sets up no variable at all.
   */
  secretVariables?(request: SecretVariablesRequest): Promise<PinnedSecretVariable[]>;
  /** Opens one pinned `environment_variable` secret for the egress proxy, after admission (audited). */
  openSecret?(request: SecretOpenRequest): Promise<SecretOpening>;
}

export interface RuntimeLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export type TurnOutcome = "settled" | "lost_claim";
