import type { WorkerRosterView } from "../../coordinator/workerRoster.js";
import { isoTime } from "../../kernel/clock.js";

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** The worker roster on the wire (an Awaken extension): identities, liveness, what each holds. */
export function workerRosterDto(view: WorkerRosterView): Record<string, unknown> {
  return {
    type: "worker_roster",
    workers: view.workers.map((w) => ({
      type: "worker",
      id: w.identity,
      kind: w.kind,
      this_replica: w.thisReplica,
      alive: w.alive,
      last_seen_at: iso(w.lastSeenAt),
      slots: w.slots,
      claims: w.claims.map((c) => ({
        run_id: c.runId,
        session_id: c.sessionId,
        slot: c.slot,
        epoch: c.epoch,
        lease_expires_at: iso(c.leaseExpiresAt),
        renewed_at: isoTime(c.renewedAt),
        lapsed: c.lapsed,
      })),
    })),
    self_hosted: view.selfHosted.map((p) => ({
      type: "self_hosted_worker",
      environment_id: p.environmentId,
      worker_id: p.workerId,
      alive: p.alive,
      last_polled_at: isoTime(p.lastPolledAt),
      work: p.work.map((w) => ({
        work_id: w.workId,
        session_id: w.sessionId,
        state: w.state,
        lease_expires_at: iso(w.leaseExpiresAt),
      })),
    })),
    truncated: view.truncated,
  };
}
