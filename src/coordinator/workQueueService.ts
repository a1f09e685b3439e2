import { randomBytes } from "node:crypto";
import { BoundedCache } from "../kernel/boundedCache.js";
import { sha256Hex } from "../kernel/canonicalJson.js";
import { type Clock, clearTimer, setTimer } from "../kernel/clock.js";
import { AwakenError, notFound } from "../kernel/errors.js";
import type { ListQuery, Page } from "../kernel/pagination.js";
import { environmentNotFound, extensionId } from "./environmentKeyService.js";
import type {
  AppendPrecondition,
  EnvironmentRecord,
  EnvironmentStore,
  SessionRecord,
  SessionStore,
  SessionsTokenBinding,
  SessionWorkHook,
  WorkQueueStats,
  WorkQueueStore,
} from "./ports.js";
import {
  DEFAULT_LEASE_LIMITS,
  DEFAULT_RECLAIM_MS,
  decideAck,
  decideHeartbeat,
  decideMetadata,
  decideStop,
  effectiveWork,
  type HeartbeatResponse,
  type LeaseLimits,
  type WorkItemRecord,
} from "./workLease.js";

/** Every sessions token starts with this, so a request's credential kind is known before a lookup. */
export const SESSIONS_TOKEN_PREFIX = "sk-awaken-sess-";

/** Who is calling a work route: the lease checks depend on it (wire §2.8's credential column). */
export type WorkCaller =
  | { kind: "api_key" }
  | { kind: "environment_key" }
  | { kind: "sessions_token"; workId: string; epoch: number };

export interface PollRequest {
  /** Long-poll up to this long for an item (0: answer at once). */
  blockMs: number;
  reclaimOlderThanMs: number;
  /** `Anthropic-Worker-ID`, when sent. */
  workerId: string | null;
  /** Ends a long-poll early (the client went away). */
  signal?: AbortSignal;
}

/** The `secret` of a polled item: base64url JSON `{sessions_token}` (wire §4). */
export function encodeWorkSecret(sessionsToken: string): string {
  return Buffer.from(JSON.stringify({ sessions_token: sessionsToken })).toString("base64url");
}

/**
 * The self-hosted work queue (wire §2.8, §4): an item is queued when a session of a self_hosted
 * environment is created or wakes (its previous item stopped); customer workers poll, ack,
 * heartbeat and stop it under the lease discipline of `workLease.ts`. Each poll mints a sessions
 * token bound to (work id, epoch) — stored hashed, returned only inside that poll's `secret`.
 */
export class WorkQueueService implements SessionWorkHook {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Environment revisions are immutable, so whether one is self_hosted is cached for good. */
  private readonly selfHostedRevisions = new BoundedCache<string, boolean>({ maxEntries: 10_000 });

  constructor(
    private readonly store: WorkQueueStore,
    private readonly environments: EnvironmentStore,
    private readonly clock: Clock,
    private readonly limits: LeaseLimits = DEFAULT_LEASE_LIMITS,
    /** To re-queue a stopped item's session that still owes tool results (absent: never). */
    private readonly sessions?: Pick<SessionStore, "get">,
  ) {}

  static isSessionsToken(credential: string): boolean {
    return credential.startsWith(SESSIONS_TOKEN_PREFIX);
  }

  // ------------------------------------------------------------------------------------------
  // Queueing (called by the session service)

  async needsWorker(session: SessionRecord): Promise<void> {
    if (!(await this.isSelfHosted(session))) return;
    const now = this.clock.now();
    const item: WorkItemRecord = {
      id: extensionId("work", now),
      workspaceId: session.workspaceId,
      environmentId: session.environmentId,
      sessionId: session.id,
      state: "queued",
      metadata: {},
      owner: null,
      epoch: 0,
      polledAt: null,
      acknowledgedAt: null,
      startedAt: null,
      lastHeartbeatAt: null,
      leaseExpiresAt: null,
      ttlSeconds: this.limits.defaultTtlSeconds,
      stopRequestedAt: null,
      stoppedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    if (await this.store.enqueue(item, now)) this.wake(session.environmentId);
  }

  private async isSelfHosted(session: SessionRecord): Promise<boolean> {
    const key = `${session.environmentId}#${session.environmentRevision}`;
    const known = this.selfHostedRevisions.get(key);
    if (known !== undefined) return known;
    const config = await this.environments.getRevision(session.environmentId, session.environmentRevision);
    const selfHosted = config?.type === "self_hosted";
    this.selfHostedRevisions.set(key, selfHosted);
    return selfHosted;
  }

  // ------------------------------------------------------------------------------------------
  // The work routes

  /** Delivers the oldest deliverable item, long-polling up to `blockMs`; null when none came. */
  async poll(
    workspaceId: string,
    environmentId: string,
    request: PollRequest,
  ): Promise<{ item: WorkItemRecord; secret: string } | null> {
    await this.environment(workspaceId, environmentId);
    if (request.workerId) await this.store.notePoller(environmentId, request.workerId, this.clock.now());
    const deadline = this.clock.now() + request.blockMs;
    for (;;) {
      const token = `${SESSIONS_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
      const item = await this.store.poll(
        environmentId,
        request.workerId,
        request.reclaimOlderThanMs,
        sha256Hex(token),
        this.clock.now(),
      );
      if (item) return { item, secret: encodeWorkSecret(token) };
      const left = deadline - this.clock.now();
      if (left <= 0 || request.signal?.aborted) return null;
      await this.waitForWork(environmentId, left, request.signal);
    }
  }

  async ack(workspaceId: string, environmentId: string, workId: string): Promise<WorkItemRecord> {
    await this.environment(workspaceId, environmentId);
    return this.found(
      workId,
      await this.store.transition(environmentId, workId, (item) =>
        decideAck(item, this.clock.now(), this.limits),
      ),
    );
  }

  async heartbeat(
    workspaceId: string,
    environmentId: string,
    workId: string,
    caller: WorkCaller,
    request: { expected: string | undefined; desiredTtlSeconds: number | undefined },
  ): Promise<HeartbeatResponse> {
    await this.environment(workspaceId, environmentId);
    return this.found(
      workId,
      await this.store.transition(environmentId, workId, (item) =>
        decideHeartbeat(item, { ...request, tokenEpoch: tokenEpoch(caller) }, this.clock.now(), this.limits),
      ),
    );
  }

  async stop(
    workspaceId: string,
    environmentId: string,
    workId: string,
    caller: WorkCaller,
    force: boolean,
  ): Promise<WorkItemRecord> {
    await this.environment(workspaceId, environmentId);
    const item = this.found(
      workId,
      await this.store.transition(environmentId, workId, (item) =>
        decideStop(item, { tokenEpoch: tokenEpoch(caller), force }, this.clock.now()),
      ),
    );
    // A session whose item was stopped while it still owes a tool result (an operator's stop, a
    // worker gone mid-call) gets a new item at once: nothing else would ever wake it.
    if (item.state === "stopped" && this.sessions) {
      const session = await this.sessions.get(item.workspaceId, item.sessionId);
      if (session?.pending.some((p) => p.kind === "server_tool_result")) await this.needsWorker(session);
    }
    return item;
  }

  async update(
    workspaceId: string,
    environmentId: string,
    workId: string,
    metadata: Record<string, string | null>,
  ): Promise<WorkItemRecord> {
    await this.environment(workspaceId, environmentId);
    return this.found(
      workId,
      await this.store.transition(environmentId, workId, (item) =>
        decideMetadata(item, metadata, this.clock.now()),
      ),
    );
  }

  async get(workspaceId: string, environmentId: string, workId: string): Promise<WorkItemRecord> {
    await this.environment(workspaceId, environmentId);
    const item = await this.store.get(environmentId, workId);
    return effectiveWork(this.found(workId, item), this.clock.now());
  }

  async list(workspaceId: string, environmentId: string, query: ListQuery): Promise<Page<WorkItemRecord>> {
    await this.environment(workspaceId, environmentId);
    const page = await this.store.list(environmentId, query);
    const now = this.clock.now();
    return { ...page, data: page.data.map((item) => effectiveWork(item, now)) };
  }

  async stats(workspaceId: string, environmentId: string): Promise<WorkQueueStats> {
    await this.environment(workspaceId, environmentId);
    return this.store.stats(environmentId, DEFAULT_RECLAIM_MS, this.clock.now());
  }

  // ------------------------------------------------------------------------------------------
  // Sessions tokens

  /** The delivery a sessions token is bound to, with its item as it stands now; null if unknown. */
  async authenticateToken(credential: string): Promise<SessionsTokenBinding | null> {
    const binding = await this.store.findToken(sha256Hex(credential));
    return binding && { ...binding, item: effectiveWork(binding.item, this.clock.now()) };
  }

  /** What a send under this token must still hold when its events are appended. */
  static leasePrecondition(binding: { workId: string; epoch: number }): AppendPrecondition {
    return { kind: "work_lease", workId: binding.workId, epoch: binding.epoch };
  }

  // ------------------------------------------------------------------------------------------

  private async environment(workspaceId: string, environmentId: string): Promise<EnvironmentRecord> {
    const env = await this.environments.get(workspaceId, environmentId);
    if (!env) throw environmentNotFound(environmentId);
    if (env.config.type !== "self_hosted") {
      throw new AwakenError(
        "invalid_request",
        `environment ${environmentId} is a ${env.config.type} environment; work queues exist only for self_hosted environments`,
      );
    }
    return env;
  }

  private found<T>(workId: string, value: T | null): T {
    if (value === null) throw notFound("work", workId);
    return value;
  }

  private wake(environmentId: string): void {
    const waiters = this.waiters.get(environmentId);
    if (!waiters) return;
    this.waiters.delete(environmentId);
    for (const wake of waiters) wake();
  }

  /**
   * Waits for an item queued by this process, at most `ms`. Items queued by another replica are
   * found by the next poll (the SDK polls again within 1-3 s); no cross-replica signal is needed.
   */
  private waitForWork(environmentId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.waiters.get(environmentId);
      if (!waiters) {
        waiters = new Set();
        this.waiters.set(environmentId, waiters);
      }
      const set = waiters;
      const done = () => {
        clearTimer(this.clock, timer);
        signal?.removeEventListener("abort", done);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(environmentId) === set) this.waiters.delete(environmentId);
        resolve();
      };
      const timer = setTimer(this.clock, done, ms);
      signal?.addEventListener("abort", done, { once: true });
      set.add(done);
    });
  }
}

function tokenEpoch(caller: WorkCaller): number | null {
  return caller.kind === "sessions_token" ? caller.epoch : null;
}
