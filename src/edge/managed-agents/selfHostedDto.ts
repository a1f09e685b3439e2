import type { EnvironmentKeyRecord, WorkQueueStats } from "../../coordinator/ports.js";
import type { WorkItemRecord } from "../../coordinator/workLease.js";
import { isoTime } from "../../kernel/clock.js";

// Wire projections of the self-hosted work queue (SDK `BetaSelfHostedWork`, `…QueueStats`) and of
// environment keys (an Awaken extension).

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** `secret` is only ever set on the poll response (wire §4); every other read passes null. */
export function workDto(w: WorkItemRecord, secret: string | null = null): Record<string, unknown> {
  return {
    id: w.id,
    type: "work",
    environment_id: w.environmentId,
    data: { type: "session", id: w.sessionId },
    state: w.state,
    metadata: w.metadata,
    secret,
    created_at: isoTime(w.createdAt),
    acknowledged_at: iso(w.acknowledgedAt),
    started_at: iso(w.startedAt),
    latest_heartbeat_at: iso(w.lastHeartbeatAt),
    stop_requested_at: iso(w.stopRequestedAt),
    stopped_at: iso(w.stoppedAt),
  };
}

export function workStatsDto(s: WorkQueueStats): Record<string, unknown> {
  return {
    type: "work_queue_stats",
    depth: s.depth,
    pending: s.pending,
    oldest_queued_at: iso(s.oldestQueuedAt),
    workers_polling: s.workersPolling,
  };
}

/** The key itself appears only in the creation response. */
export function environmentKeyDto(k: EnvironmentKeyRecord, key?: string): Record<string, unknown> {
  return {
    type: "environment_key",
    id: k.id,
    environment_id: k.environmentId,
    name: k.name,
    ...(key !== undefined ? { key } : {}),
    key_hint: k.keyHint,
    created_at: isoTime(k.createdAt),
    revoked_at: iso(k.revokedAt),
  };
}
