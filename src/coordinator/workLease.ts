/**
 * The self-hosted work queue (wire §2.8, §4) as pure decisions, shared by every store backend.
 *
 * A work item carries the same claim discipline as a run (`commitFence.ts`): an owner, a lease
 * expiry and an epoch. The epoch advances every time the item is delivered by a poll, i.e. whenever
 * the lease changes hands, and each sessions token is bound to (work id, epoch). Whatever a token
 * does is checked against the item's current epoch, state and lease, so a worker that lost its lease
 * (TTL lapsed, item stopped, item re-delivered) can change nothing.
 *
 * States: `queued` (waiting; "pending" once polled and not yet acknowledged) → `starting` (acked) →
 * `active` (first heartbeat) → `stopping` (graceful stop requested) → `stopped` (final).
 */
import { isoTime } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import { applyMetadataPatch } from "../kernel/metadata.js";

export type WorkState = "queued" | "starting" | "active" | "stopping" | "stopped";

export interface WorkItemRecord {
  id: string;
  workspaceId: string;
  environmentId: string;
  /** The session the item runs tools for (`data: {type:"session", id}`). */
  sessionId: string;
  state: WorkState;
  metadata: Record<string, string>;
  /** The worker id (`Anthropic-Worker-ID`) of the latest delivery, when it sent one. */
  owner: string | null;
  /** Advances with every delivery; sessions tokens are bound to one epoch. */
  epoch: number;
  /** When the current delivery was polled; with `state: "queued"` this marks the item pending. */
  polledAt: number | null;
  acknowledgedAt: number | null;
  startedAt: number | null;
  lastHeartbeatAt: number | null;
  /** The lease of a `starting`, `active` or `stopping` item; past it, the lease is lost. */
  leaseExpiresAt: number | null;
  ttlSeconds: number;
  stopRequestedAt: number | null;
  stoppedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** The literal the SDK worker sends with its first heartbeat (`lib/environments/worker.ts`). */
export const NO_HEARTBEAT = "NO_HEARTBEAT";
/** Wire §4: a polled, unacknowledged item returns to the queue after this long by default. */
export const DEFAULT_RECLAIM_MS = 5_000;
/** Wire §2.8: `block_ms` is 1-999. */
export const MAX_POLL_BLOCK_MS = 999;
/** Stats count a worker as polling when it polled within this window (wire §4). */
export const WORKERS_POLLING_WINDOW_MS = 30_000;

export interface LeaseLimits {
  /** The TTL of a lease no heartbeat asked about; the SDK worker assumes 90 s until told. */
  defaultTtlSeconds: number;
  minTtlSeconds: number;
  maxTtlSeconds: number;
}

export const DEFAULT_LEASE_LIMITS: LeaseLimits = {
  defaultTtlSeconds: 90,
  minTtlSeconds: 1,
  maxTtlSeconds: 3_600,
};

const LEASED: ReadonlySet<WorkState> = new Set(["starting", "active", "stopping"]);

/** True when the item's lease ran out: its holder is presumed gone. */
export function leaseLapsed(item: WorkItemRecord, now: number): boolean {
  return LEASED.has(item.state) && item.leaseExpiresAt !== null && item.leaseExpiresAt <= now;
}

/**
 * The item as it stands at `now`. Time alone changes two things, and every reader and writer
 * applies them the same way (writers persist the result): a lapsed `starting`/`active` lease hands
 * the item back to the queue, and a `stopping` item whose worker vanished has stopped.
 */
export function effectiveWork(item: WorkItemRecord, now: number): WorkItemRecord {
  if (!leaseLapsed(item, now)) return item;
  if (item.state === "stopping") {
    return { ...item, state: "stopped", stoppedAt: item.leaseExpiresAt, leaseExpiresAt: null };
  }
  return {
    ...item,
    state: "queued",
    polledAt: null,
    acknowledgedAt: null,
    startedAt: null,
    lastHeartbeatAt: null,
    leaseExpiresAt: null,
  };
}

/** True when a poll may deliver the item: queued and never polled, or pending past `reclaimMs`. */
export function deliverable(item: WorkItemRecord, now: number, reclaimMs: number): boolean {
  const e = effectiveWork(item, now);
  return e.state === "queued" && (e.polledAt === null || e.polledAt <= now - reclaimMs);
}

/** A poll delivers the item to a new holder: the lease changes hands, so the epoch advances. */
export function deliver(item: WorkItemRecord, workerId: string | null, now: number): WorkItemRecord {
  const e = effectiveWork(item, now);
  return {
    ...e,
    state: "queued",
    owner: workerId,
    epoch: e.epoch + 1,
    polledAt: now,
    acknowledgedAt: null,
    startedAt: null,
    lastHeartbeatAt: null,
    leaseExpiresAt: null,
    updatedAt: now,
  };
}

/** What a decision did: the row to write (null: unchanged) and what the caller answers. */
export interface WorkChange<T> {
  next: WorkItemRecord | null;
  result: T;
}

export const formatHeartbeat = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** The lease as the wire reports it (`BetaWorkLeaseState`, the 412's `current_state`). */
export function leaseState(item: WorkItemRecord) {
  return {
    state: item.state,
    ttl_seconds: item.ttlSeconds,
    last_heartbeat: formatHeartbeat(item.lastHeartbeatAt),
    lease_extended: false,
  };
}

function stateConflict(message: string): AwakenError {
  return new AwakenError("work_state_conflict", message);
}

/** `ack`: a pending item becomes `starting` and its lease starts running. Repeats are harmless. */
export function decideAck(
  item: WorkItemRecord,
  now: number,
  limits: LeaseLimits,
): WorkChange<WorkItemRecord> {
  const e = effectiveWork(item, now);
  if (e.state === "stopped") throw new AwakenError("work_stopped", `work ${item.id} is stopped`);
  if (e.state !== "queued") return { next: e === item ? null : e, result: e };
  if (e.polledAt === null) {
    throw stateConflict(
      `work ${item.id} is queued and was not delivered to anyone; poll it (GET /v1/environments/${item.environmentId}/work/poll) before acknowledging it`,
    );
  }
  const next: WorkItemRecord = {
    ...e,
    state: "starting",
    acknowledgedAt: now,
    ttlSeconds: e.ttlSeconds || limits.defaultTtlSeconds,
    leaseExpiresAt: now + (e.ttlSeconds || limits.defaultTtlSeconds) * 1000,
    updatedAt: now,
  };
  return { next, result: next };
}

export interface HeartbeatRequest {
  /** The epoch of the sessions token that sent it; null for an environment key (any holder). */
  tokenEpoch: number | null;
  /** `expected_last_heartbeat`: `NO_HEARTBEAT`, the previous `last_heartbeat`, or absent (no check). */
  expected: string | undefined;
  desiredTtlSeconds: number | undefined;
}

export interface HeartbeatResponse {
  type: "work_heartbeat";
  last_heartbeat: string;
  lease_extended: boolean;
  state: WorkState;
  ttl_seconds: number;
}

function preconditionFailed(item: WorkItemRecord, why: string): AwakenError {
  return new AwakenError("heartbeat_precondition_failed", `heartbeat precondition failed: ${why}`, {
    details: { error_code: "heartbeat_precondition_failed", current_state: leaseState(item) },
  });
}

function clampTtl(desired: number | undefined, current: number, limits: LeaseLimits): number {
  if (desired === undefined) return current || limits.defaultTtlSeconds;
  return Math.min(limits.maxTtlSeconds, Math.max(limits.minTtlSeconds, Math.round(desired)));
}

/**
 * `heartbeat`: optimistic lease renewal (wire §4). The first beat of a delivery sends
 * `NO_HEARTBEAT` and moves the item to `active`; every later one must echo the previous
 * `last_heartbeat` exactly. A mismatch, a lapsed lease or a token of an earlier delivery is a 412
 * carrying the lease as it stands. Once `stopping` or `stopped` nothing is compared.
 */
export function decideHeartbeat(
  item: WorkItemRecord,
  request: HeartbeatRequest,
  now: number,
  limits: LeaseLimits,
): WorkChange<HeartbeatResponse> {
  const e = effectiveWork(item, now);
  const respond = (w: WorkItemRecord, extended: boolean): HeartbeatResponse => ({
    type: "work_heartbeat",
    last_heartbeat: formatHeartbeat(w.lastHeartbeatAt) ?? "",
    lease_extended: extended,
    state: w.state,
    ttl_seconds: w.ttlSeconds,
  });
  if (e.state === "stopped") return { next: e === item ? null : e, result: respond(e, false) };
  if (request.tokenEpoch !== null && request.tokenEpoch !== e.epoch) {
    throw preconditionFailed(
      e,
      `this sessions token holds delivery ${request.tokenEpoch} of work ${item.id}, but the work was delivered again (delivery ${e.epoch}); the lease belongs to whoever polled it last`,
    );
  }
  const renew = (w: WorkItemRecord, patch: Partial<WorkItemRecord>): WorkChange<HeartbeatResponse> => {
    const ttlSeconds = clampTtl(request.desiredTtlSeconds, w.ttlSeconds, limits);
    // Strictly increasing, so two beats never report the same `last_heartbeat`.
    const beat = Math.max(now, (w.lastHeartbeatAt ?? 0) + 1);
    const next: WorkItemRecord = {
      ...w,
      ...patch,
      lastHeartbeatAt: beat,
      ttlSeconds,
      leaseExpiresAt: now + ttlSeconds * 1000,
      updatedAt: now,
    };
    return { next, result: respond(next, true) };
  };
  if (e.state === "stopping") return renew(e, {});
  const claiming = request.expected === undefined || request.expected === NO_HEARTBEAT;
  if (e.state === "queued") {
    if (e.polledAt !== null && claiming) {
      // A heartbeat before the ack acknowledges the delivery too.
      return renew(e, { state: "active", acknowledgedAt: now, startedAt: now });
    }
    throw preconditionFailed(
      e,
      e.polledAt === null
        ? `work ${item.id} is back in the queue (its lease lapsed or it was never delivered); poll it again`
        : `work ${item.id} has no heartbeat yet; the first heartbeat must send expected_last_heartbeat=${NO_HEARTBEAT}`,
    );
  }
  if (e.state === "starting") {
    if (!claiming) {
      throw preconditionFailed(
        e,
        `work ${item.id} has no heartbeat yet; the first heartbeat must send expected_last_heartbeat=${NO_HEARTBEAT}`,
      );
    }
    return renew(e, { state: "active", startedAt: now });
  }
  const current = formatHeartbeat(e.lastHeartbeatAt);
  if (request.expected !== undefined && request.expected !== current) {
    throw preconditionFailed(
      e,
      `expected_last_heartbeat ${JSON.stringify(request.expected)} does not match the lease's last heartbeat ${JSON.stringify(current)}; another worker may hold the lease`,
    );
  }
  return renew(e, {});
}

export interface StopRequest {
  tokenEpoch: number | null;
  force: boolean;
}

/**
 * `stop`: `force` stops at once; otherwise an item whose lease is held goes `stopping` (its worker
 * learns it from the next heartbeat) and an item nobody holds stops at once. Stopping a stopped item
 * is a 409 the SDK swallows (it must not retry it).
 */
export function decideStop(
  item: WorkItemRecord,
  request: StopRequest,
  now: number,
): WorkChange<WorkItemRecord> {
  const e = effectiveWork(item, now);
  if (e.state === "stopped") throw new AwakenError("work_stopped", `work ${item.id} is already stopped`);
  if (request.tokenEpoch !== null && request.tokenEpoch !== e.epoch) {
    throw leaseLost(
      item.id,
      `the work was delivered again (delivery ${e.epoch}) after this token's delivery ${request.tokenEpoch}`,
    );
  }
  const stopped = (): WorkChange<WorkItemRecord> => {
    const next: WorkItemRecord = {
      ...e,
      state: "stopped",
      stopRequestedAt: e.stopRequestedAt ?? now,
      stoppedAt: now,
      leaseExpiresAt: null,
      updatedAt: now,
    };
    return { next, result: next };
  };
  if (request.force || e.state === "queued") return stopped();
  if (e.state === "stopping") return { next: e === item ? null : e, result: e };
  const next: WorkItemRecord = { ...e, state: "stopping", stopRequestedAt: now, updatedAt: now };
  return { next, result: next };
}

/** `update`: a metadata patch (a string upserts, `null` deletes). */
export function decideMetadata(
  item: WorkItemRecord,
  patch: Record<string, string | null>,
  now: number,
): WorkChange<WorkItemRecord> {
  const e = effectiveWork(item, now);
  const next: WorkItemRecord = { ...e, metadata: applyMetadataPatch(e.metadata, patch), updatedAt: now };
  return { next, result: next };
}

export function leaseLost(workId: string, why: string): AwakenError {
  return new AwakenError(
    "work_lease_lost",
    `the sessions token no longer holds the lease of work ${workId}: ${why}. Nothing was changed; poll for work again to get a new token`,
    { details: { error_code: "work_lease_lost", work_id: workId } },
  );
}

/** What a sessions token's send must still hold when its events are appended (checked in the same transaction). */
export interface WorkLeaseClaim {
  workId: string;
  epoch: number;
}

/** The lease fields the ledger reads inside its transaction. */
export interface WorkLeaseRow {
  sessionId: string;
  state: WorkState;
  epoch: number;
  leaseExpiresAt: number | null;
}

/**
 * The input ledger's precondition for a send authenticated by a sessions token, as a pure
 * decision: null when the token's delivery still holds a live lease on this session's work item,
 * else the rejection to throw (the transaction then appends nothing).
 */
export function workLeaseProblem(
  row: WorkLeaseRow | undefined,
  claim: WorkLeaseClaim,
  sessionId: string,
  now: number,
): AwakenError | null {
  if (!row) return leaseLost(claim.workId, "the work item no longer exists");
  if (row.sessionId !== sessionId) {
    return new AwakenError(
      "permission_denied",
      `this sessions token belongs to the work of session ${row.sessionId}, not ${sessionId}`,
    );
  }
  if (row.epoch !== claim.epoch) {
    return leaseLost(
      claim.workId,
      `the work was delivered again (delivery ${row.epoch}) after this token's delivery ${claim.epoch}`,
    );
  }
  if (row.state === "stopped") return leaseLost(claim.workId, "the work is stopped");
  if (row.state === "queued" || row.leaseExpiresAt === null) {
    return leaseLost(claim.workId, "the delivery was never acknowledged or heartbeated, so no lease is held");
  }
  if (row.leaseExpiresAt <= now) {
    return leaseLost(claim.workId, `its lease expired at ${isoTime(row.leaseExpiresAt)} without a heartbeat`);
  }
  return null;
}
