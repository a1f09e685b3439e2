import type { AdminAuditEntry } from "../control/adminAudit.js";
import type { AgentDefinition } from "../control/agentDefinition.js";
import type { CaptureRequest } from "../kernel/contentCapture.js";
import type { JsonObject } from "../kernel/json.js";
import type { PackageResolution } from "../kernel/packageResolution.js";
import type { ListQuery, Page } from "../kernel/pagination.js";
import type { Tracing } from "../kernel/tracing.js";
import type { SessionResourceRecord } from "../resources/ports.js";
import type { CommitOperation, CommitResult } from "./commitOperation.js";
import type { SubjectErasureStore } from "./dataSubjects.js";
import type { EnvironmentConfig } from "./environmentConfig.js";
import type {
  CommittedFact,
  Fact,
  PendingAction,
  SessionMeter,
  SessionStatus,
  SessionUsage,
} from "./facts.js";
import type { ImageBuildStore } from "./imageBuilds/ports.js";
import type { OutcomeState } from "./outcomes.js";
import type { RunHandOff } from "./runHandOff.js";
import type { SessionProjection } from "./sessionProjection.js";
import type { TunnelStore } from "./tunnels/ports.js";
import type { WorkflowRunState } from "./workflowFold.js";
import type { WorkChange, WorkItemRecord, WorkLeaseClaim } from "./workLease.js";

// ---------------------------------------------------------------------------------------------
// Registration: Control publishes, the Coordinator's catalog receives exact snapshots.

export interface ExecutableAgentSnapshot {
  workspaceId: string;
  agentId: string;
  version: number;
  fingerprint: string;
  definition: AgentDefinition;
  publishedAt: number;
  /**
   * A session's pin only: the agents its `multiagent` roster names, each pinned (as this snapshot
   * is) when the session was created, in roster order without repeats. Absent: no roster.
   */
  roster?: ExecutableAgentSnapshot[];
  /**
   * An inline agent's (a thread's only): defined by its parent's model, not saved. Its identity
   * fields are the parent's, its definition its own.
   */
  inline?: true;
}

export interface RegistrationReceipt {
  workspaceId: string;
  agentId: string;
  version: number;
  fingerprint: string;
  registeredAt: number;
}

/** Idempotent on (workspace, agent, version); same identity with another fingerprint fails closed. */
export interface ExecutableAgentRegistrar {
  register(snapshot: ExecutableAgentSnapshot): Promise<RegistrationReceipt>;
}

export interface CatalogStore {
  /** Inserts the snapshot or returns the stored one for the same identity (the caller compares). */
  putIfAbsent(snapshot: ExecutableAgentSnapshot, registeredAt: number): Promise<RegistrationReceipt>;
  get(workspaceId: string, agentId: string, version: number): Promise<ExecutableAgentSnapshot | null>;
}

// ---------------------------------------------------------------------------------------------
// Environments: each change is an immutable revision; sessions pin one.

export interface EnvironmentRecord {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  scope: string | null;
  metadata: Record<string, string>;
  config: EnvironmentConfig;
  revision: number;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
}

/**
 * Environment authoring's store. Writes take the admin audit entry of the change (Control's audit
 * contract) and commit it in the change's own transaction, only when the change took effect.
 */
export interface EnvironmentStore {
  create(record: EnvironmentRecord, audit: AdminAuditEntry): Promise<void>;
  get(workspaceId: string, id: string): Promise<EnvironmentRecord | null>;
  /**
   * The environment a new session pins, possibly as this process last read it: the session store's
   * insert then checks the pin is still the newest revision of a live environment, and throws
   * `EnvironmentPinMoved` (nothing written) when it is not. Absent: `get`, with no such check.
   */
  pinnedForSession?(workspaceId: string, id: string): Promise<EnvironmentRecord | null>;
  getRevision(environmentId: string, revision: number): Promise<EnvironmentConfig | null>;
  /** The revision's frozen package resolution; null when no worker recorded one yet. */
  packageResolution(environmentId: string, revision: number): Promise<PackageResolution | null>;
  /**
   * Records the revision's frozen package resolution, first writer wins: answers the one recorded
   * after the call (`resolution`, or the one another worker recorded first).
   */
  recordPackageResolution(
    environmentId: string,
    revision: number,
    resolution: PackageResolution,
    at: number,
  ): Promise<PackageResolution>;
  /**
   * Writes the head; appends a revision when `config` changed (revision already incremented).
   * False when the environment is gone (nothing written).
   */
  update(record: EnvironmentRecord, newRevision: boolean, audit: AdminAuditEntry): Promise<boolean>;
  list(
    workspaceId: string,
    query: ListQuery & { includeArchived: boolean },
  ): Promise<Page<EnvironmentRecord>>;
  delete(workspaceId: string, id: string, audit: AdminAuditEntry): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------
// Credential pins: Control freezes them into the session baseline; a holder opens one.

/**
 * The last-mile holders that open through `CredentialHolderPort.open`: the MCP connection, and the
 * A2A delegate's connection to its remote agent.
 */
export type CredentialHolderKind = "mcp_connection" | "a2a_delegate";
/**
 * The sandbox's egress proxy, which substitutes an `environment_variable` secret into outbound
 * requests; a stdio MCP server's process, started in the sandbox with it in its environment; and
 * an ACP Brain's harness, started there the same way with the variables its runtime names.
 * Kinds of their own (opened through `openSecret`), so `open` and its wire stay as they are.
 */
export type SecretHolderKind = "egress_proxy" | "mcp_process" | "acp_harness";
/** Every holder a pin's holder policy may name. */
export type PinHolderKind = CredentialHolderKind | SecretHolderKind;

/** An `environment_variable` credential's networking (wire §5), as frozen with its revision. */
export type SecretNetworking = { type: "unrestricted" } | { type: "limited"; allowed_hosts: string[] };

/** What a pinned `environment_variable` credential serves: one variable, its hosts, where it goes. */
export interface EnvironmentVariableUsage {
  kind: "environment_variable";
  secretName: string;
  networking: SecretNetworking;
  injection: { header: boolean; body: boolean };
}

/**
 * One credential frozen into a session: which exact revision, for which use, opened by which holder.
 * Secret-free by construction; the material stays sealed in the vault's revision row.
 */
export interface CredentialPin {
  credentialId: string;
  vaultId: string;
  revision: number;
  workspaceId: string;
  authType: "static_bearer" | "mcp_oauth" | "environment_variable";
  /**
   * What the credential serves: the MCP server URL (and the agent's name for that server), or an
   * `environment_variable` (secret-free: its name, hosts and injection, as the pinned revision says).
   */
  usage:
    | { kind: "mcp_server"; url: string; mcpServerName: string }
    /** The remote agent (by its agent card URL) an `a2a:` model delegates each turn to. */
    | { kind: "a2a_agent"; url: string }
    | EnvironmentVariableUsage;
  /** Holder policy: the only holders admission lets open it. */
  holders: PinHolderKind[];
}

/** Freezes pins at session creation (Control implements it; the coordinator only asks). */
export interface CredentialPinner {
  /** Throws a client error (unknown or archived vault) before anything is stored. */
  pin(workspaceId: string, vaultIds: readonly string[], agent: AgentDefinition): Promise<CredentialPin[]>;
}

/** A run's request to materialize one pinned credential for one holder. */
export type CredentialOpenRequest = {
  workspaceId: string;
  sessionId: string;
  /** Who asks: the run and the claim it holds (audited). */
  runId: string;
  owner: string;
  epoch: number;
} & (
  | {
      holder: "mcp_connection";
      /** The use: the MCP server (by URL) this connection is for. */
      mcpServerUrl: string;
    }
  | {
      holder: "a2a_delegate";
      /** The use: the remote agent (by its agent card URL) this delegate connection is for. */
      agentCardUrl: string;
    }
);

/** Who asks for an `environment_variable` secret: the run's claim, for one secret holder. */
export interface SecretOpenRequest {
  workspaceId: string;
  sessionId: string;
  runId: string;
  owner: string;
  epoch: number;
  holder: SecretHolderKind;
  /** The use: the pinned variable, by name (never a credential id). */
  secretName: string;
}

/**
 * Who asks for the session's pinned variables: the run's claim. In process the list needs no more
 * than the session; a remote worker's coordinator checks the claim is live before it answers.
 */
export type SecretVariablesRequest = Pick<
  SecretOpenRequest,
  "workspaceId" | "sessionId" | "runId" | "owner" | "epoch"
>;

/** A session's pinned `environment_variable` credential, secret-free (what the sandbox is set up from). */
export interface PinnedSecretVariable extends Omit<EnvironmentVariableUsage, "kind"> {
  credentialId: string;
  vaultId: string;
  revision: number;
}

/**
 * What the egress holder gets: `secret` is the admitted `secret_value` in a Buffer it zeroes once
 * it substituted it; `none` and `refused` as for `CredentialOpening`.
 */
export type SecretOpening =
  | { kind: "none" }
  | { kind: "secret"; value: Buffer; credentialId: string; revision: number }
  | { kind: "refused"; credentialId: string; revision: number; reason: string };

/**
 * What a holder gets. `none`: the session pinned nothing for that use (the holder goes without).
 * `bearer`: the admitted material, in a Buffer the holder zeroes once it handed it on. `refused`:
 * admission failed (archived, deleted, wrong holder or use, does not open), with a secret-free reason.
 */
export type CredentialOpening =
  | { kind: "none" }
  | { kind: "bearer"; token: Buffer; credentialId: string; revision: number }
  | { kind: "refused"; credentialId: string; revision: number; reason: string };

// ---------------------------------------------------------------------------------------------
// Sessions, threads and history.

export interface SessionRecord extends SessionProjection {
  id: string;
  workspaceId: string;
  agent: ExecutableAgentSnapshot;
  environmentId: string;
  environmentRevision: number;
  threadId: string;
  title: string | null;
  metadata: Record<string, string>;
  resources: unknown[];
  vaultIds: string[];
  /**
   * The credentials frozen at creation from `vaultIds` (ids, revisions, usage, holder policy; never
   * material). A run opens only these, exactly these revisions, whatever was rotated since.
   */
  credentialPins: CredentialPin[];
  budget: unknown | null;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
  /** The data subject (end user) the session is about, from its metadata at creation; null: none. */
  dataSubject: string | null;
  /**
   * The user profile (Control's) a request attributed the session to at creation; null or absent:
   * none. The session's data subject is then the profile's id.
   */
  userProfileId?: string | null;
}

export interface SessionListQuery extends ListQuery {
  order: "asc" | "desc";
  agentId?: string;
  /** Only sessions of these agents (a caller's allow-list). */
  agentIds?: readonly string[];
  /** Only these sessions (a caller confined to one). */
  ids?: readonly string[];
  /** Only sessions bound to a client name starting with this (a caller confined to a namespace). */
  namePrefix?: string;
  agentVersion?: number;
  /** Only sessions that mount this memory store (a `session_resources` row names it). */
  memoryStoreId?: string;
  /** Only sessions a deployment's runs opened (a `deployment_runs` row names them). */
  deploymentId?: string;
  statuses?: SessionStatus[];
  includeArchived: boolean;
  createdAt?: { gt?: number; gte?: number; lt?: number; lte?: number };
}

/**
 * One thread of a session: its primary thread (the session's own run sequence) or a child thread a
 * run spawned. Its status and usage are the projection its own committed facts carry (the head of
 * its commits), exactly as the session's are for its primary thread.
 */
export interface ThreadRecord {
  id: string;
  sessionId: string;
  /** The thread that spawned it; null for the session's primary thread. */
  parentThreadId: string | null;
  /** The agent a child thread runs (its snapshot at creation); null: the session's (a primary thread). */
  agent: ExecutableAgentSnapshot | null;
  status: SessionStatus;
  usage: SessionUsage;
  /** Its own running time and list cost, as its head carries them (the session's, for the primary). */
  meter: SessionMeter;
  /** What its run waits for (a child's asks are answered on the session, routed by call id). */
  pending: PendingAction[];
  /** Whether any fact was committed to it yet (before that it has no stats and no usage). */
  committed: boolean;
  createdAt: number;
  /** Its newest commit's time, or its creation's before any. */
  updatedAt: number;
  archivedAt: number | null;
}

/** Threads of one session, oldest first (the primary thread is the first). */
export interface ThreadListQuery extends ListQuery {
  statuses?: SessionStatus[];
}

export interface EventListQuery extends ListQuery {
  order: "asc" | "desc";
  types?: string[];
  createdAt?: { gt?: number; gte?: number; lt?: number; lte?: number };
}

export interface SessionStore {
  /** Writes the session, its thread and its resources (already validated) in one transaction. */
  create(record: SessionRecord, resources?: readonly SessionResourceRecord[]): Promise<void>;
  /**
   * Moves a session's pins (only ever by a holder's `mcp_oauth` refresh of the pinned revision:
   * the same grant's successor, never a replacement credential). Optional for test doubles.
   */
  updateCredentialPins?(workspaceId: string, sessionId: string, pins: CredentialPin[]): Promise<void>;
  get(workspaceId: string, id: string): Promise<SessionRecord | null>;
  /**
   * The session and its thread's version in one read, for a live stream's start (the tail starts
   * there without a read of its own). Optional: without it the tail reads the version itself.
   */
  getWithThreadVersion?(
    workspaceId: string,
    id: string,
  ): Promise<{ session: SessionRecord; threadVersion: number } | null>;
  list(workspaceId: string, query: SessionListQuery): Promise<Page<SessionRecord>>;
  /** The threads of a session (`session` as read by `get`: its row decides the primary's archive). */
  listThreads(session: SessionRecord, query: ThreadListQuery): Promise<Page<ThreadRecord>>;
  /** One thread of a session, or null when the session has no such thread. */
  getThread(session: SessionRecord, threadId: string): Promise<ThreadRecord | null>;
  /** Marks a child thread archived at `now` unless it already is; false when nothing changed. */
  archiveThread(sessionId: string, threadId: string, now: number): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------
// Names: client-chosen session names, and the workspace's default environment in a space of its own.

/** A key space of the name store: a session's client-chosen name, or the default environment's key. */
/**
 * `a2a_message`: an A2A message that opened a new context, by a hash of its agent and message id,
 * so a peer retrying that send reaches the session it made instead of a second one.
 * `deployment_run`: a deployment run's id, so a trigger settled again after its replica stopped
 * reaches the session the first attempt made instead of a second one. `dreamer_agent`: the
 * workspace's built-in dreamer agent (Dreams), made on the first dream.
 */
export type NameSpace = "session" | "default_environment" | "dreamer_agent" | KeyedSpace;
/** The name spaces that key a session by a protocol's own id (`SessionEntry.openKeyed`). */
export type KeyedSpace = "a2a_message" | "deployment_run";

/** A name's row: bound to its target, or reserved by the one request creating that target. */
export type NameEntry =
  | { state: "bound"; targetId: string }
  | { state: "reserved"; token: string; reservedAt: number };

/**
 * Names in a workspace, each bound to one target (a session id, an environment id). A name is first
 * reserved by one creator and then bound, so concurrent first uses create one target. A deleted
 * session's (or environment's) names go with it.
 */
export interface SessionNameStore {
  get(workspaceId: string, space: NameSpace, name: string): Promise<NameEntry | null>;
  /**
   * Reserves the name for `token` when it has no row, or takes over a reservation made before
   * `staleBefore` (its creator is presumed gone) or a binding to `replacing` (a target found gone).
   * Atomic: of concurrent callers one gets true.
   */
  reserve(
    workspaceId: string,
    space: NameSpace,
    name: string,
    token: string,
    now: number,
    staleBefore: number,
    replacing?: string,
  ): Promise<boolean>;
  /** Binds the name to `targetId` when `token` holds its reservation or it has no row; true if bound. */
  bind(
    workspaceId: string,
    space: NameSpace,
    name: string,
    token: string,
    targetId: string,
    now: number,
  ): Promise<boolean>;
  /** Drops `token`'s reservation (its creation failed); anyone else's row stays. */
  release(workspaceId: string, space: NameSpace, name: string, token: string): Promise<void>;
  /** The names of `space` bound to `targetId` (one indexed read; usually one name or none). */
  namesOf(workspaceId: string, space: NameSpace, targetId: string): Promise<string[]>;
}

export interface HistoryReader {
  /** Committed facts of a thread with seq > afterSeq, ascending, at most `limit`. */
  readThread(threadId: string, afterSeq: number, limit?: number): Promise<CommittedFact[]>;
  threadVersion(threadId: string): Promise<number>;
  listEvents(sessionId: string, threadId: string, query: EventListQuery): Promise<Page<CommittedFact>>;
  /**
   * The outcomes of each thread, folded from its committed facts (threads without any are absent).
   * Optional: a reader without it shows no outcomes.
   */
  outcomes?(threadIds: readonly string[]): Promise<Map<string, OutcomeState[]>>;
}

/** What an input does to the run of its session, decided by the coordinator under the same transaction. */
export type RunEffect = { kind: "start"; runId: string } | { kind: "resume" } | { kind: "cancel" };

/**
 * Appends coordinator-authored facts (user input echoes, status changes) to a session's thread.
 * `decide` runs inside the transaction with the current session row and active run, so checks
 * such as "is this tool use still pending" cannot race with another input.
 */
export interface InputLedger {
  /**
   * `precondition`, when given, is checked inside the same transaction before `decide`; when it
   * fails the append throws and nothing is written (a send under a sessions token whose work lease
   * is no longer held).
   */
  append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
    reads?: AppendReads,
  ): Promise<InputOutcome>;
  /** The receipt of the most recent send to this session, if its hash matches and it is recent. */
  lastSend(sessionId: string, requestHash: string, notBefore: number): Promise<SendReceipt | null>;
  /**
   * Appends `session.deleted` as the thread's last fact, erases everything else the session owned
   * and hides it from reads. Live tails still find the final fact by thread id and close.
   */
  deleteSession(sessionId: string, deletedFact: Fact, now: number): Promise<CommittedFact | null>;
}

export interface SendReceipt {
  /** What the send answered: the facts that echo its events. */
  echo: CommittedFact[];
  /** The hash of the body a keyed send came with; null when unknown (older receipts). */
  bodyHash: string | null;
}

export interface InputOutcome {
  committed: CommittedFact[];
  plan: InputPlan;
  /** The run that was active when the plan was made (cancel/resume applied to it). */
  activeRunId: string | null;
  /**
   * The run the append claimed for an idle in-process slot in its own statement (`IdleSlots`): it
   * is not claimable, so no dispatch signal announces it.
   */
  handedOff?: string;
  /** What the append committed on the session's child threads (`InputPlan.threads`), in plan order. */
  threads?: ThreadInputOutcome[];
}

/** One child thread's part of an append: its committed facts and the run its effects applied to. */
export interface ThreadInputOutcome {
  threadId: string;
  committed: CommittedFact[];
  effects: RunEffect[];
  activeRunId: string | null;
}

/**
 * A child thread of the session as an append reads it when asked to (`AppendReads.threads`): its
 * head's projection, its active run (locked or serialised with the session's) and the model request
 * that run left open.
 */
export interface ChildThreadState {
  threadId: string;
  agentName: string;
  archived: boolean;
  /** Its head's version (0 before its first commit). */
  version: number;
  pending: PendingAction[];
  activeRun: { id: string; state: string; epoch: number } | null;
  openModelRequest: { startId: string; provider: string; model: string } | null;
}

export interface InputContext {
  session: SessionRecord;
  activeRun: { id: string; state: string; epoch: number } | null;
  /** A model request the active run started and has not ended (closed on cancel). */
  openModelRequest: { startId: string; provider: string; model: string } | null;
  /**
   * The session's outcomes, folded from its committed facts; read only when the append was asked
   * to (`AppendReads.outcomes`: a batch that defines an outcome or interrupts), absent otherwise.
   */
  outcomes?: OutcomeState[];
  /** The primary thread's workflow runs not yet ended; read only when asked (`AppendReads.workflows`). */
  openWorkflows?: WorkflowRunState[];
  /**
   * The session's child threads; read only when the append was asked to (`AppendReads.threads`), or
   * when a first decision said it needs them (`InputPlan.needsThreads`). `activeRun` is then the
   * primary thread's run, never a child's.
   */
  threads?: ChildThreadState[];
}

/** What an append reads for `decide` beyond the session and its run, when a batch needs it. */
export interface AppendReads {
  outcomes?: boolean;
  /** The primary thread's workflow runs not yet ended (an interrupt ends them). */
  workflows?: boolean;
  threads?: boolean;
}

/** What an input batch does to one child thread: facts on its history, effects on its active run. */
export interface ThreadInputPlan {
  threadId: string;
  facts: Fact[];
  /** `resume` or `cancel` of the child's active run (a child's run is started by its parent only). */
  effects: RunEffect[];
}

export interface InputPlan {
  facts: Fact[];
  /** Applied in order after the facts are appended, in the same transaction. */
  effects: RunEffect[];
  /** Ids of the facts that echo the caller's events (the send response). */
  echoIds: string[];
  /** Field changes to the session row, written in the same transaction as the facts. */
  sessionPatch?: SessionPatch;
  /** When set, the echo is remembered under this hash so a retried identical send returns it. */
  requestHash?: string;
  /** With an idempotency key's `requestHash`: the body's hash, to tell a repeat from a reuse. */
  bodyHash?: string;
  /**
   * The trace context of the request that made the plan (opaque, `kernel/traceContext.ts`): stored
   * on the run a `start` or `resume` effect queues, so the worker's claim continues that trace.
   */
  traceContext?: string | null;
  /** Writes on the session's child threads, in the same transaction as the primary's facts. */
  threads?: ThreadInputPlan[];
  /**
   * The decision needs the session's child threads and was made without them (`threads` absent
   * from its context): the append reads them and decides again; nothing of this plan is written.
   */
  needsThreads?: true;
}

export interface SessionPatch {
  title?: string | null;
  metadata?: Record<string, string>;
  budget?: unknown | null;
  archivedAt?: number;
}

// ---------------------------------------------------------------------------------------------
// Dispatch, claims and the commit fence.

export interface Activation {
  runId: string;
  sessionId: string;
  threadId: string;
  workspaceId: string;
  owner: string;
  epoch: number;
  leaseExpiresAt: number;
  crashCount: number;
  /**
   * For the claim-wait metric, set by the claiming store and never sent to remote workers: when the
   * run became claimable (ms; queued at, or its lapsed lease's expiry), and whether this claim took
   * over a lapsed lease.
   */
  claimableSince?: number;
  reclaimed?: boolean;
  agent: ExecutableAgentSnapshot;
  environment: { id: string; revision: number; config: EnvironmentConfig };
  /** The thread's committed facts at claim time, read in the claim's transaction. */
  history: CommittedFact[];
  /** The trace of the input that last started or resumed the run (`InputPlan.traceContext`). */
  traceContext?: string | null;
  /**
   * Whether the session had resources when the run was claimed (read by the claim itself). False
   * lets a run whose agent pins no custom skill skip asking for its resources; absent: ask.
   */
  sessionHasResources?: boolean;
  /**
   * The session's budget as of the claim (its wire object; null: none). A budget changed later
   * reaches the run as a committed `session_updated` fact. Absent (an older coordinator): none.
   */
  budget?: JsonObject | null;
  /**
   * Set by the claiming store from the session row it already reads, never sent to workers: the
   * session asked for content capture in its metadata, naming this data subject (or none). Absent:
   * not asked. The gateway turns it into `captureContent` (kernel/contentCapture.ts).
   */
  captureRequest?: CaptureRequest | null;
  /**
   * Set by the claiming store from the session row, never sent to workers: the session's data
   * subject. The gateway turns it into `workspaceErasedAt`.
   */
  dataSubject?: string | null;
  /**
   * When the session's data subject was last erased (the coordinator's clock, ms); absent: never.
   * A worker holding the session's workspace from before it deletes it before the next tool runs.
   */
  workspaceErasedAt?: number;
  /**
   * The revision's derived container image (`host/repo@sha256:…`), set by the gateway when its
   * build is `ready`: the container tier runs it instead of the base image it was built from.
   */
  builtImage?: string;
  /**
   * Whether this slice's spans may carry content: the session asked and its data subject (if it
   * names one) consented, as of this claim. The worker records content only when its own ceiling
   * (`AWAKEN_TRACE_CONTENT=on`) is on too. Absent: false.
   */
  captureContent?: boolean;
}

/**
 * An in-process worker slot waiting for work, reserved for one input append: the append may claim
 * the run it starts or resumes for this slot in its own statement, instead of queuing it and waking
 * the slot to claim it with another. Exactly one of `deliver` and `release` is called.
 */
export interface IdleSlot {
  /** The claim's owner, as the slot's own claims name it. */
  readonly owner: string;
  readonly leaseMs: number;
  /** The append claimed a run for this slot and committed: the slot runs it. */
  deliver(activation: Activation): void;
  /** Nothing was claimed for the slot: it waits for work again. */
  release(): void;
}

/** Where an input append asks for an idle in-process slot; null when none waits. */
export interface IdleSlots {
  reserve(): IdleSlot | null;
}

export interface ClaimPort {
  /** Claims the oldest runnable run (queued, or claimed with an expired lease → epoch + 1). */
  /**
   * `prefer`: a run to take if it is claimable, before older ones that turned claimable less than a
   * second ago: concurrent claims, each sent for the run whose signal woke it, then do not take one
   * another's and come back empty; runs waiting longer still go first. A hint: SQLite serialises
   * its claims, so none can race another, and it takes the oldest as always.
   */
  claim(owner: string, leaseMs: number, prefer?: string): Promise<Activation | null>;
  /** Extends the lease; false when the claim is no longer ours (expired, cancelled, reclaimed). */
  renew(runId: string, owner: string, epoch: number, leaseMs: number): Promise<boolean>;
  /** Gives a claim back (graceful shutdown) so another worker can take it at once. */
  release(runId: string, owner: string, epoch: number): Promise<void>;
  /**
   * Ends now the live leases of claims whose owner starts with `ownerPrefix`, for a caller that
   * knows their holder is gone: its connection dropped, or it was an earlier incarnation of this
   * process. With `notRenewedAfter`, only claims last claimed or renewed at or before it (a holder
   * that renewed since is alive). Epochs are untouched: the next claim takes each run as a lapsed
   * lease (epoch + 1, counted as a crash), which fences the old holder out. Returns the runs' ids.
   */
  lapseClaimsOf(ownerPrefix: string, notRenewedAfter?: number): Promise<string[]>;
}

export interface CommitFencePort {
  commit(op: CommitOperation): Promise<CommitResult>;
}

export interface DispatchStore extends ClaimPort, CommitFencePort {}

// ---------------------------------------------------------------------------------------------
// Signals: only lower latency. Correctness never depends on them (polling finishes every run).

export interface WakeSignals {
  /**
   * `version` is the thread version the commit produced. Readers that read only up to it keep
   * their output in commit order even while later commits land during their (async) read.
   */
  threadCommitted(threadId: string, version: number): void;
  onThreadCommitted(threadId: string, listener: (version: number) => void): () => void;
  /** Every thread's commits (a workspace-wide view such as the session change feed filters them). */
  onAnyThreadCommitted(listener: (threadId: string) => void): () => void;
  /** `runId`: the run that turned claimable; omitted when the sender does not know which. */
  dispatchReady(runId?: string): void;
  onDispatchReady(listener: (runId: string | null) => void): () => void;
  runCancelled(runId: string): void;
  onRunCancelled(listener: (runId: string) => void): () => void;
}

/** What a live preview shows while the model produces it. */
export type PreviewKind = "text" | "thinking" | "tool_input";

/**
 * Streaming previews (token deltas). Interactive evidence only: never stored, never replayed.
 * `eventId` is the id of the fact the preview becomes (the agent message, the thinking fact, the
 * tool call), so a reader drops the preview once that fact is committed. `index` is the content
 * block inside the preview a delta appends to (text: the message's text block; otherwise 0).
 * Tool-input deltas are fragments of the call's JSON input, not parseable on their own.
 */
export type LiveEvidence =
  | { kind: "preview_start"; eventId: string; preview: PreviewKind; toolName?: string }
  | { kind: "preview_delta"; eventId: string; index: number; text: string }
  /** The preview becomes no fact (the model request failed or was cut off). */
  | { kind: "preview_abandoned"; eventId: string };

export interface LiveEvidenceBus {
  publish(sessionId: string, evidence: LiveEvidence): void;
  subscribe(sessionId: string, listener: (evidence: LiveEvidence) => void): () => void;
}

/**
 * Facts this process has just committed to one thread, handed over only after the commit returned.
 * A live tail whose cursor they continue appends them instead of reading them back; anything else
 * (a gap, another replica's commit) is still read from the store, which stays the only truth.
 */
export interface CommittedBatch {
  threadId: string;
  /** The facts occupy seq (versionAfter - facts.length, versionAfter], in order. */
  versionAfter: number;
  facts: readonly Fact[];
  /** The rows' `createdAt` (one commit, one time). */
  committedAt: number;
}

/** In-process only: never fed by a remote worker's request, never crosses replicas. */
export interface CommittedFactsFeed {
  publish(batch: CommittedBatch): void;
  subscribe(threadId: string, listener: (batch: CommittedBatch) => void): () => void;
}

export type { ListQuery, Page, SessionUsage };

/** The coordinator's role-narrowed store bundle: the ports it owns, never a database handle. */
export interface CoordinatorStores {
  catalog: CatalogStore;
  environments: EnvironmentStore;
  sessions: SessionStore;
  history: HistoryReader;
  ledger: InputLedger;
  dispatch: DispatchStore;
  workQueue: WorkQueueStore;
  environmentKeys: EnvironmentKeyStore;
  sessionNames: SessionNameStore;
  /** Erasure of a data subject's captured content (the erasure adapter). */
  erasure: SubjectErasureStore;
  /** MCP tunnels and their CA certificates (`tunnels/`). */
  tunnels: TunnelStore;
  /** Container image-build demands, their leases and digests (`imageBuilds/`). */
  imageBuilds: ImageBuildStore;
}

/** Everything the coordinator's services need, as narrow ports. */
export interface CoordinatorPorts extends CoordinatorStores {
  signals: WakeSignals;
  evidence: LiveEvidenceBus;
  /** Where committers hand their facts to this process's tails; absent, tails read every fact. */
  committed?: CommittedFactsFeed;
  /** Where a send finds the active trace to store with the run it starts; absent, none is stored. */
  tracing?: Tracing;
  /**
   * Where the in-process worker lends its idle slots to the input ledger (the store given the same
   * object claims for them); absent, every run waits for a claim.
   */
  handOff?: RunHandOff;
}

// ---------------------------------------------------------------------------------------------
// Self-hosted environments (wire §2.8, §4): environment keys, the work queue, sessions tokens.

/** A condition the input ledger checks inside its append transaction. */
export type AppendPrecondition = { kind: "work_lease" } & WorkLeaseClaim;

/** An environment key (Awaken extension): authenticates one self_hosted environment's worker. */
export interface EnvironmentKeyRecord {
  id: string;
  workspaceId: string;
  environmentId: string;
  name: string | null;
  /** SHA-256 of the key; the key itself is shown once, at creation. */
  keyHash: string;
  /** A recognisable, non-secret fragment (`sk-awaken-env-…wxyz`). */
  keyHint: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface EnvironmentKeyStore {
  /** The key and its admin audit entry, in one transaction. */
  create(record: EnvironmentKeyRecord, audit: AdminAuditEntry): Promise<void>;
  list(workspaceId: string, environmentId: string, query: ListQuery): Promise<Page<EnvironmentKeyRecord>>;
  get(workspaceId: string, environmentId: string, keyId: string): Promise<EnvironmentKeyRecord | null>;
  /**
   * Sets `revoked_at` unless already set, with `audit` in the same transaction only when it did;
   * returns the key as stored afterwards.
   */
  revoke(
    workspaceId: string,
    environmentId: string,
    keyId: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<EnvironmentKeyRecord | null>;
  findByHash(keyHash: string): Promise<EnvironmentKeyRecord | null>;
}

/** What a sessions token is bound to (immutable), and the lease of its work item as it stands. */
export interface SessionsTokenBinding {
  workId: string;
  epoch: number;
  workspaceId: string;
  environmentId: string;
  sessionId: string;
  item: WorkItemRecord;
}

export interface WorkQueueStats {
  depth: number;
  pending: number;
  oldestQueuedAt: number | null;
  workersPolling: number;
}

export interface WorkQueueStore {
  /**
   * Queues `item` unless its session already has a work item that is not stopped (one live item
   * per session, enforced by a unique index). Returns the item queued, or null.
   */
  enqueue(item: WorkItemRecord, now: number): Promise<WorkItemRecord | null>;
  /**
   * In one transaction: takes the oldest deliverable item of the environment (`deliverable`),
   * delivers it (`deliver`: epoch + 1) and stores the new sessions token's hash bound to that
   * epoch. Concurrent polls never take the same item.
   */
  poll(
    environmentId: string,
    workerId: string | null,
    reclaimOlderThanMs: number,
    tokenHash: string,
    now: number,
  ): Promise<WorkItemRecord | null>;
  /** Records that a worker polled (stats' `workers_polling`). */
  notePoller(environmentId: string, workerId: string, now: number): Promise<void>;
  /** Reads the item and applies `decide` in one transaction (row-locked on PostgreSQL); writes `next`. */
  transition<T>(
    environmentId: string,
    workId: string,
    decide: (item: WorkItemRecord) => WorkChange<T>,
  ): Promise<T | null>;
  get(environmentId: string, workId: string): Promise<WorkItemRecord | null>;
  list(environmentId: string, query: ListQuery): Promise<Page<WorkItemRecord>>;
  stats(environmentId: string, reclaimOlderThanMs: number, now: number): Promise<WorkQueueStats>;
  findToken(tokenHash: string): Promise<SessionsTokenBinding | null>;
}

/** How the session service asks for a self-hosted worker when a session starts or wakes. */
export interface SessionWorkHook {
  /** Queues a work item for the session when its environment is self_hosted and none is live. */
  needsWorker(session: SessionRecord): Promise<void>;
}

/**
 * Told after a session was deleted, so what lives outside the database for it (its sandbox
 * workspace on this host) goes too. Best effort: the deletion itself is already committed.
 */
export type SessionDeletedHook = (sessionId: string) => Promise<void>;
