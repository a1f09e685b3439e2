import { canonicalJson, sha256Hex } from "../kernel/canonicalJson.js";
import type { Clock } from "../kernel/clock.js";
import { captureRequestedBy } from "../kernel/contentCapture.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import { applyMetadataPatch } from "../kernel/metadata.js";
import type { Page } from "../kernel/pagination.js";
import type { SessionResourcePreparer, SessionResourceRequest } from "../resources/ports.js";
import { admitBudgetUpdate, admitCreateBudget } from "./budgetRules.js";
import { DATA_SUBJECT_METADATA_KEY, dataSubjectOf } from "./dataSubjects.js";
import type { DomainInput, SendDedupe } from "./domainInputs.js";
import { type EnvironmentConfig, PACKAGE_MANAGERS, type PackagesConfig } from "./environmentConfig.js";
import { EnvironmentPinMoved } from "./environmentPin.js";
import { encodeFact } from "./factCodec.js";
import { type CommittedFact, EMPTY_METER, EMPTY_USAGE } from "./facts.js";
import { admitBuiltImage } from "./imageBuilds/builtImageAdmission.js";
import { admitDerivedImagePackages } from "./imageBuilds/derivedImagePackages.js";
import { derivedImageBase } from "./imageBuilds/imageBuildService.js";
import { closeOpenRequest, IDLE_END_TURN, planInputs } from "./inputRules.js";
import type {
  AppendPrecondition,
  CoordinatorPorts,
  CredentialPinner,
  ExecutableAgentSnapshot,
  InputOutcome,
  SessionDeletedHook,
  SessionListQuery,
  SessionRecord,
  SessionWorkHook,
  ThreadListQuery,
  ThreadRecord,
} from "./ports.js";
import { admitSandboxProvisioning } from "./sandboxAdmission.js";
import { admitSandboxTier, type SandboxTierPolicy, STRICT_TIER_POLICY } from "./sandboxTierPolicy.js";
import { inputOutcomeSignals, sendWakeSignal } from "./wakeSignals.js";
import type { AdmissionQuotas } from "./workspaceQuotas.js";

/** Prepares an environment revision's packages (once per exact content); rejects when it cannot. */
export type PackagesPreparationHook = (
  packages: PackagesConfig,
  /** The revision they belong to: its frozen resolution is the one installed (or made and recorded). */
  revision: { environmentId: string; revision: number },
  /**
   * `derivedImage`: the revision derives its container image, whose build installs the npm and pip
   * packages; the host then only freezes their resolution (the build's input), installing nothing.
   */
  options: { derivedImage: boolean },
) => Promise<void>;

export interface CreateSessionCommand {
  workspaceId: string;
  agent: ExecutableAgentSnapshot;
  environmentId: string;
  title: string | null;
  metadata: Record<string, string>;
  resources: SessionResourceRequest[];
  vaultIds: string[];
  budget: unknown | null;
  initialInputs: DomainInput[];
  /** The user profile the session is attributed to (checked live by the caller); absent: none. */
  userProfileId?: string | null;
}

export interface UpdateSessionCommand {
  title?: string | null;
  metadata?: Record<string, string | null>;
  budget?: unknown | null;
}

/**
 * A session's data subject: the user profile it is attributed to (a profile is a data subject), or
 * the subject its metadata names. Naming both, as different subjects, is refused: the session's
 * content would belong to two subjects and an erasure of one would leave it with the other.
 */
function subjectOfSession(cmd: CreateSessionCommand): string | null {
  const named = dataSubjectOf(cmd.metadata);
  const profile = cmd.userProfileId ?? null;
  if (profile !== null && named !== null && named !== profile)
    throw invalid(
      `metadata[${JSON.stringify(DATA_SUBJECT_METADATA_KEY)}]: names data subject ${JSON.stringify(named)}, but the request attributes the session to user profile ${profile} (its data subject); send one of them`,
    );
  return profile ?? named;
}

/**
 * Sessions: pin exact references at creation, take input into the committed history, and
 * persist dispatch before anything executes. Every status change is a fact in the thread.
 */
export class SessionService {
  constructor(
    private readonly ports: CoordinatorPorts,
    private readonly clock: Clock,
    /** Queues self-hosted work when a session of a self_hosted environment starts or wakes. */
    private readonly work?: SessionWorkHook,
    private readonly onDeleted?: SessionDeletedHook,
    /** Freezes the session's credential pins from `vault_ids` (absent: vault_ids are refused). */
    private readonly pinner?: CredentialPinner,
    /**
     * Prepares a cloud revision's packages before a session of it exists: creation waits
     * for it, and a failure refuses the session (400) with the preparer's message. Absent: a
     * worker prepares them on first use.
     */
    private readonly preparePackages?: PackagesPreparationHook,
    /**
     * A revision naming a tier weaker than the default (one stored before the operator turned
     * weaker tiers off) starts no session unless the operator enabled them.
     */
    private readonly tierPolicy: SandboxTierPolicy = STRICT_TIER_POLICY,
    /**
     * Validates the resources a session asks for and seals their tokens; the session store writes
     * them in the session's own transaction. Absent: `resources` are refused.
     */
    private readonly resourcePreparer?: SessionResourcePreparer,
    /** The workspace quotas an operator set: checked before a session or a turn is admitted. */
    private readonly quotas?: AdmissionQuotas,
  ) {}

  async create(cmd: CreateSessionCommand): Promise<SessionRecord> {
    await this.quotas?.admitSession(cmd.workspaceId);
    if (cmd.initialInputs.some(startsTurn)) await this.quotas?.admitTurn(cmd.workspaceId);
    try {
      return await this.createOnce(cmd, false);
    } catch (error) {
      // The environment moved after it was read (or since this process last read it): once more,
      // on a fresh read, which then pins its newest revision or refuses as that revision says.
      if (!(error instanceof EnvironmentPinMoved)) throw error;
    }
    try {
      return await this.createOnce(cmd, true);
    } catch (error) {
      if (!(error instanceof EnvironmentPinMoved)) throw error;
      throw new AwakenError(
        "unavailable",
        `environment ${cmd.environmentId} kept changing while the session was being created; retry`,
        { retryable: true, cause: error },
      );
    }
  }

  private async createOnce(cmd: CreateSessionCommand, fresh: boolean): Promise<SessionRecord> {
    const environments = this.ports.environments;
    const env =
      !fresh && environments.pinnedForSession
        ? await environments.pinnedForSession(cmd.workspaceId, cmd.environmentId)
        : await environments.get(cmd.workspaceId, cmd.environmentId);
    if (!env) {
      throw new AwakenError(
        "environment_not_found",
        `environment ${JSON.stringify(cmd.environmentId)} was not found`,
        {
          details: { error_code: "environment_not_found" },
        },
      );
    }
    if (env.archivedAt !== null) {
      throw new AwakenError(
        "environment_archived",
        `environment ${env.id} is archived and cannot start new sessions; use another environment`,
        { details: { error_code: "environment_archived" } },
      );
    }
    admitSandboxTier(env.config, this.tierPolicy, `environment ${env.id} (revision ${env.revision})`);
    // A revision stored before this rule: refused here rather than by every worker.
    admitDerivedImagePackages(env.config, `environment ${env.id} (revision ${env.revision})`);
    admitSandboxProvisioning(cmd.agent.definition, env.config, cmd.resources);
    admitCreateBudget(cmd.budget, cmd.agent);
    if (cmd.vaultIds.length > 0 && !this.pinner)
      throw invalid("vault_ids: vaults are not supported by this server yet");
    if (cmd.resources.length > 0 && !this.resourcePreparer)
      throw invalid("resources: session resources are not supported by this server");
    // The derived image must be ready: checked before preparing (nothing to prepare for a refused
    // session) and after (preparing may have just frozen the resolution and demanded the build).
    // Only a revision that derives an image is looked up: other sessions cost no statement more.
    const derivesImage = derivedImageBase(env.config) !== null;
    if (derivesImage) await admitBuiltImage(this.ports.imageBuilds, env.id, env.revision);
    await this.prepareEnvironmentPackages(
      env.config,
      { environmentId: env.id, revision: env.revision },
      derivesImage,
    );
    if (derivesImage) await admitBuiltImage(this.ports.imageBuilds, env.id, env.revision);
    // Pinned once, here: later rotations do not reach this session; new sessions pin the newest.
    const credentialPins =
      cmd.vaultIds.length > 0 && this.pinner
        ? await this.pinner.pin(cmd.workspaceId, cmd.vaultIds, cmd.agent.definition)
        : [];
    const now = this.clock.now();
    const sessionId = newId("sesn", now);
    // Checked (files and stores found, URLs admitted, tokens sealed) before anything is stored.
    const resources =
      cmd.resources.length > 0 && this.resourcePreparer
        ? await this.resourcePreparer.prepare(cmd.workspaceId, sessionId, cmd.resources, now)
        : [];
    const record: SessionRecord = {
      id: sessionId,
      workspaceId: cmd.workspaceId,
      agent: cmd.agent,
      environmentId: env.id,
      environmentRevision: env.revision,
      threadId: newId("sthr", now),
      title: cmd.title,
      metadata: cmd.metadata,
      // The session_resources rows are the truth (the wire reads them); this legacy column stays empty.
      resources: [],
      vaultIds: cmd.vaultIds,
      credentialPins,
      budget: cmd.budget,
      status: "idle",
      pending: [],
      usage: { ...EMPTY_USAGE },
      meter: { ...EMPTY_METER },
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      dataSubject: subjectOfSession(cmd),
      userProfileId: cmd.userProfileId ?? null,
    };
    captureRequestedBy(cmd.metadata);
    // Validate initial inputs against the new session before anything is stored.
    if (cmd.initialInputs.length > 0)
      planInputs(
        { session: record, activeRun: null, openModelRequest: null, outcomes: [] },
        cmd.initialInputs,
        now,
      );
    await this.ports.sessions.create(record, resources);
    await this.work?.needsWorker(record);
    if (cmd.initialInputs.length > 0)
      await this.send(cmd.workspaceId, record.id, cmd.initialInputs, { admitted: true });
    // A new session is news to the workspace's hint streams: its thread now exists, at version 0.
    else {
      this.ports.signals.threadCommitted(record.threadId, 0);
      // Nothing was appended: the session is the record just written.
      return record;
    }
    return (await this.ports.sessions.get(cmd.workspaceId, record.id)) ?? record;
  }

  async get(workspaceId: string, id: string): Promise<SessionRecord> {
    const session = await this.ports.sessions.get(workspaceId, id);
    if (!session) throw notFound("session", id);
    return session;
  }

  /**
   * A session about to be streamed, with its thread's version when the store reads both at once
   * (the tail then starts there without a read of its own; see `TailOpenOptions.fromVersion`).
   */
  async getForStream(
    workspaceId: string,
    id: string,
  ): Promise<{ session: SessionRecord; threadVersion: number | undefined }> {
    if (!this.ports.sessions.getWithThreadVersion) {
      return { session: await this.get(workspaceId, id), threadVersion: undefined };
    }
    const found = await this.ports.sessions.getWithThreadVersion(workspaceId, id);
    if (!found) throw notFound("session", id);
    return found;
  }

  list(workspaceId: string, query: SessionListQuery): Promise<Page<SessionRecord>> {
    return this.ports.sessions.list(workspaceId, query);
  }

  /** The session's threads, its primary thread first, with the session that owns them. */
  async listThreads(
    workspaceId: string,
    sessionId: string,
    query: ThreadListQuery,
  ): Promise<{ session: SessionRecord; page: Page<ThreadRecord> }> {
    const session = await this.get(workspaceId, sessionId);
    return { session, page: await this.ports.sessions.listThreads(session, query) };
  }

  /** One thread of the session; a thread of another session is not found, as an unknown id is. */
  async getThread(
    workspaceId: string,
    sessionId: string,
    threadId: string,
  ): Promise<{ session: SessionRecord; thread: ThreadRecord }> {
    const session = await this.get(workspaceId, sessionId);
    const thread = await this.ports.sessions.getThread(session, threadId);
    if (!thread) throw notFound("thread", threadId);
    return { session, thread };
  }

  /**
   * Archives a child thread: it then reads as terminated and takes no input. The primary thread is
   * the session's own run sequence, archived with its session (which terminates it) and never alone:
   * asking for it is a client error (400). A thread still working (running or rescheduling) is a
   * conflict (409): interrupt it first. Archiving an archived thread returns it as it is.
   */
  async archiveThread(
    workspaceId: string,
    sessionId: string,
    threadId: string,
  ): Promise<{ session: SessionRecord; thread: ThreadRecord }> {
    const found = await this.getThread(workspaceId, sessionId, threadId);
    if (found.thread.parentThreadId === null) {
      throw invalid(
        `thread ${threadId} is the session's primary thread: it cannot be archived on its own; archive the session instead`,
      );
    }
    if (found.thread.archivedAt !== null) return found;
    if (found.thread.status === "running" || found.thread.status === "rescheduling") {
      throw new AwakenError(
        "session_running",
        `thread ${threadId} is ${found.thread.status}: interrupt it (user.interrupt naming the thread) and archive it once it is idle`,
      );
    }
    await this.ports.sessions.archiveThread(sessionId, threadId, this.clock.now());
    return this.getThread(workspaceId, sessionId, threadId);
  }

  /**
   * Accepts client inputs. Every send's echo is remembered under a request hash (its dedupe key's,
   * else its body's), so a later send can be recognised as its repeat. With `dedupe`, a send whose
   * key matches the session's most recent send, within `dedupe.windowMs`, returns that send's echo
   * instead of appending again; with `dedupe.strict`, the same key with another body is refused,
   * never merged. Without it a send is always new input, even when it repeats an earlier one word
   * for word. Each edge derives the key from its protocol (see `SendDedupe`).
   */
  async send(
    workspaceId: string,
    sessionId: string,
    inputs: DomainInput[],
    options: {
      dedupe?: SendDedupe | undefined;
      /** Checked in the append's transaction (a self-hosted worker's send must hold its lease). */
      precondition?: AppendPrecondition | undefined;
      /** The quotas already admitted this input (a new session's initial events). */
      admitted?: boolean;
    },
  ): Promise<CommittedFact[]> {
    // The append's own locked read of the session authorizes a plain send (`decide` refuses another
    // workspace's session, so nothing is written). A lease precondition is checked before that
    // read, and a dedupe hit answers without it: those read the session here first.
    let session: SessionRecord | null = options.precondition ? await this.get(workspaceId, sessionId) : null;
    // Answers and interrupts finish admitted work; only input that starts a turn meets the quotas.
    if (this.quotas && !options.admitted && inputs.some(startsTurn)) await this.quotas.admitTurn(workspaceId);
    const { dedupe } = options;
    // One canonical form and hash of the body serves both the strict check and the body's key.
    const bodyHash = sha256Hex(canonicalJson(inputs));
    const requestHash = sha256Hex(dedupe?.key ?? bodyKeyOf(bodyHash));
    if (dedupe) {
      const since = this.clock.now() - dedupe.windowMs;
      const previous = await this.ports.ledger.lastSend(sessionId, requestHash, since);
      if (previous) {
        session ??= await this.get(workspaceId, sessionId);
        if (dedupe.strict && previous.bodyHash !== null && previous.bodyHash !== bodyHash) {
          throw new AwakenError(
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a send to this session with a different body; " +
              "use a new key for new events, or repeat the original body to get its result.",
          );
        }
        return previous.echo;
      }
    }
    const now = this.clock.now();
    const traceContext = this.ports.tracing?.activeContext() ?? null;
    const outcome = await this.ports.ledger.append(
      sessionId,
      (ctx) => {
        if (ctx.session.workspaceId !== workspaceId) throw notFound("session", sessionId);
        session = ctx.session;
        return {
          ...planInputs(ctx, inputs, now),
          requestHash,
          traceContext,
          ...(dedupe?.strict ? { bodyHash } : {}),
        };
      },
      now,
      options.precondition,
      // An outcome's definition and an interrupt decide from the session's outcomes (one in
      // progress refuses another; an interrupt ends an open evaluation): read only for them.
      inputs.some((input) => input.kind === "interrupt")
        ? // An interrupt also ends the workflow runs the primary thread has going.
          { outcomes: true, workflows: true }
        : inputs.some((input) => input.kind === "define_outcome")
          ? { outcomes: true }
          : undefined,
    );
    this.signal(outcome);
    // Any input but an interrupt wakes a dormant self-hosted session (its item stopped): it may
    // start or resume a run, or be queued behind a running turn that will soon ask the client's
    // worker for tool results. `needsWorker` queues nothing while an item is live.
    if (this.work && session && inputs.some((input) => input.kind !== "interrupt"))
      await this.work.needsWorker(session);
    // The echo in the order of the events sent, wherever each landed (a child's answer on its history).
    const landed = [...outcome.committed, ...(outcome.threads ?? []).flatMap((t) => t.committed)];
    return outcome.plan.echoIds.flatMap((id) => landed.find((f) => f.id === id) ?? []);
  }

  /**
   * The echo of the session's most recent send when it was made under `key` within `windowMs` (a
   * client retrying a request whose answer it lost), or null. Nothing is written.
   */
  async repeatedSend(
    workspaceId: string,
    sessionId: string,
    key: string,
    windowMs: number,
  ): Promise<CommittedFact[] | null> {
    const previous = await this.ports.ledger.lastSend(sessionId, sha256Hex(key), this.clock.now() - windowMs);
    if (!previous) return null;
    await this.get(workspaceId, sessionId);
    return previous.echo;
  }

  async update(workspaceId: string, sessionId: string, cmd: UpdateSessionCommand): Promise<SessionRecord> {
    await this.get(workspaceId, sessionId);
    const now = this.clock.now();
    const outcome = await this.ports.ledger.append(
      sessionId,
      ({ session }) => {
        if (cmd.budget !== undefined) {
          if (session.status === "terminated" || session.archivedAt !== null) {
            throw new AwakenError(
              "session_terminated",
              `session ${session.id} is terminated: its budget can no longer change`,
            );
          }
          admitBudgetUpdate(session, cmd.budget);
        }
        const changed: JsonObject = {};
        const patch: { title?: string | null; metadata?: Record<string, string>; budget?: unknown | null } =
          {};
        if (cmd.title !== undefined && cmd.title !== session.title) {
          patch.title = cmd.title;
          changed.title = cmd.title;
        }
        if (cmd.metadata !== undefined) {
          const metadata = applyMetadataPatch(session.metadata, cmd.metadata);
          if (metadata[DATA_SUBJECT_METADATA_KEY] !== session.metadata[DATA_SUBJECT_METADATA_KEY]) {
            throw invalid(
              `metadata[${JSON.stringify(DATA_SUBJECT_METADATA_KEY)}]: a session's data subject is fixed when it is created and cannot be changed or removed`,
            );
          }
          captureRequestedBy(metadata);
          if (canonicalJson(metadata) !== canonicalJson(session.metadata)) {
            patch.metadata = metadata;
            changed.metadata = metadata;
          }
        }
        if (cmd.budget !== undefined && canonicalJson(cmd.budget) !== canonicalJson(session.budget)) {
          patch.budget = cmd.budget;
          changed.budget = cmd.budget as JsonObject | null;
        }
        const facts =
          Object.keys(changed).length > 0
            ? [encodeFact({ id: newId("sevt", now), kind: "session_updated", changes: changed })]
            : [];
        return { facts, effects: [], echoIds: [], sessionPatch: patch };
      },
      now,
    );
    this.signal(outcome);
    return this.get(workspaceId, sessionId);
  }

  /** Archiving ends the session: any run is cancelled and the thread records the termination. */
  async archive(workspaceId: string, sessionId: string): Promise<SessionRecord> {
    const current = await this.get(workspaceId, sessionId);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const outcome = await this.ports.ledger.append(
      sessionId,
      (ctx) => ({
        facts: [
          ...closeOpenRequest(ctx, now),
          ...(ctx.activeRun && ctx.session.status !== "idle"
            ? [encodeFact({ id: newId("sevt", now), kind: "status_idle", reason: IDLE_END_TURN })]
            : []),
          encodeFact({ id: newId("sevt", now), kind: "status_terminated" }),
        ],
        effects: ctx.activeRun ? [{ kind: "cancel" as const }] : [],
        echoIds: [],
        sessionPatch: { archivedAt: now },
        // Its children's runs end with it: none answers a terminated session.
        threads: (ctx.threads ?? [])
          .filter((child) => child.activeRun !== null)
          .map((child) => ({
            threadId: child.threadId,
            facts: [encodeFact({ id: newId("sevt", now), kind: "status_idle", reason: IDLE_END_TURN })],
            effects: [{ kind: "cancel" as const }],
          })),
      }),
      now,
      undefined,
      { threads: true },
    );
    this.signal(outcome);
    return this.get(workspaceId, sessionId);
  }

  async delete(workspaceId: string, sessionId: string): Promise<void> {
    const session = await this.get(workspaceId, sessionId);
    const now = this.clock.now();
    const fact = await this.ports.ledger.deleteSession(
      sessionId,
      encodeFact({ id: newId("sevt", now), kind: "session_deleted" }),
      now,
    );
    if (fact) {
      this.ports.committed?.publish({
        threadId: session.threadId,
        versionAfter: fact.seq,
        facts: [fact],
        committedAt: fact.createdAt,
      });
      this.ports.signals.threadCommitted(session.threadId, fact.seq);
    }
    await this.onDeleted?.(sessionId);
  }

  private async prepareEnvironmentPackages(
    config: EnvironmentConfig,
    revision: { environmentId: string; revision: number },
    derivedImage: boolean,
  ): Promise<void> {
    if (!this.preparePackages || config.type !== "cloud") return;
    if (!PACKAGE_MANAGERS.some((manager) => config.packages[manager].length > 0)) return;
    try {
      await this.preparePackages(config.packages, revision, { derivedImage });
    } catch (error) {
      if (error instanceof AwakenError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw invalid(`the environment's packages could not be prepared: ${message}`);
    }
  }

  private signal(outcome: InputOutcome): void {
    // The committed facts reach this process's tails before the thread signal would make them read.
    for (const committed of [outcome.committed, ...(outcome.threads ?? []).map((t) => t.committed)]) {
      const last = committed[committed.length - 1];
      if (last)
        this.ports.committed?.publish({
          threadId: last.threadId,
          versionAfter: last.seq,
          facts: committed,
          committedAt: last.createdAt,
        });
    }
    // Workers first (the order `inputOutcomeSignals` keeps): the run is the latency that matters.
    for (const signal of inputOutcomeSignals(outcome)) sendWakeSignal(this.ports.signals, signal);
  }
}

/**
 * The dedupe key a send's body gives: every send is remembered under it, so an edge whose protocol
 * marks a retry of an unkeyed send (and not its first attempt) can find the original by its body.
 */
export function bodyDedupeKey(inputs: readonly DomainInput[]): string {
  return bodyKeyOf(sha256Hex(canonicalJson(inputs)));
}

const bodyKeyOf = (bodyHash: string): string => `body:${bodyHash}`;

/** Input that starts (or queues) a turn of new work, which workspace quotas admit or refuse. */
function startsTurn(input: DomainInput): boolean {
  return input.kind === "message" || input.kind === "define_outcome";
}
