import type { Clock } from "../kernel/clock.js";

/** One claim a worker holds on a run of the workspace (lapsed when its lease ran out unrenewed). */
export interface HeldClaim {
  runId: string;
  sessionId: string;
  /** `<worker id>.<incarnation>/<slot>`. */
  owner: string;
  epoch: number;
  leaseExpiresAt: number | null;
  /** The last claim or renewal (the run row's `updated_at`). */
  renewedAt: number;
}

/** One work item a self-hosted environment's worker holds. */
export interface HeldWork {
  workId: string;
  sessionId: string;
  state: string;
  leaseExpiresAt: number | null;
}

/** A self-hosted environment's worker, as its polls and deliveries left it. */
export interface SelfHostedPoller {
  environmentId: string;
  workerId: string;
  lastPolledAt: number;
  work: HeldWork[];
}

/** How many claims and pollers one roster read returns at most (the page answers `truncated`). */
export const ROSTER_LIMIT = 500;

/** The reads behind the worker roster; every read is confined to one workspace's sessions. */
export interface WorkerRosterStore {
  /** Runs of the workspace in state `claimed`, lapsed leases included, most recently renewed first. */
  heldClaims(workspaceId: string, limit: number): Promise<HeldClaim[]>;
  /** The workspace's self-hosted pollers, most recent first, with the work items each still holds. */
  pollers(workspaceId: string, limit: number): Promise<SelfHostedPoller[]>;
}

/** What this replica knows of workers beyond the claims table. */
export interface WorkerPresence {
  /** This replica's in-process worker: its identity and slots; null when it runs none. */
  inProcess(): { identity: string; slots: number } | null;
  /** Remote workers that claimed or renewed through this replica recently, by identity. */
  remoteSeen(): ReadonlyArray<{ identity: string; lastSeenAt: number }>;
  /** Whether idle remote workers (holding none of the workspace's runs) are shown to this workspace. */
  showsIdleRemotes(workspaceId: string): boolean;
}

export interface WorkerClaimView {
  runId: string;
  sessionId: string;
  slot: string;
  epoch: number;
  leaseExpiresAt: number | null;
  renewedAt: number;
  lapsed: boolean;
}

export interface WorkerView {
  identity: string;
  kind: "in_process" | "remote";
  /** This replica's own in-process worker. */
  thisReplica: boolean;
  alive: boolean;
  lastSeenAt: number | null;
  /** In-process slots when known (this replica's worker), else null. */
  slots: number | null;
  claims: WorkerClaimView[];
}

export interface WorkerRosterView {
  workers: WorkerView[];
  selfHosted: Array<SelfHostedPoller & { alive: boolean }>;
  truncated: boolean;
}

/** A self-hosted worker counts as alive this long after its last poll (a poll blocks up to ~60 s). */
export const POLLER_SEEN_MS = 90_000;
/** How long a remote worker counts as connected after its last claim or renewal. */
export const REMOTE_SEEN_MS = 60_000;

/** The identity part of an owner (`<id>.<incarnation>`) and its slot. */
export function splitOwner(owner: string): { identity: string; slot: string } {
  const cut = owner.indexOf("/");
  return cut < 0
    ? { identity: owner, slot: "" }
    : { identity: owner.slice(0, cut), slot: owner.slice(cut + 1) };
}

/**
 * The roster, pure: claims grouped by worker identity, this replica's in-process worker and the
 * remote workers it saw recently added even when they hold nothing. A worker is alive when one of
 * its leases is live, or (remote) it was seen within `REMOTE_SEEN_MS`, or it is this replica's own.
 */
export function rosterOf(
  claims: readonly HeldClaim[],
  presence: {
    inProcess: { identity: string; slots: number } | null;
    remoteSeen: ReadonlyArray<{ identity: string; lastSeenAt: number }>;
    showIdleRemotes: boolean;
    localIdPrefix: string;
  },
  now: number,
): WorkerView[] {
  const byIdentity = new Map<string, WorkerView>();
  const viewOf = (identity: string): WorkerView => {
    let view = byIdentity.get(identity);
    if (!view) {
      const own = presence.inProcess?.identity === identity;
      view = {
        identity,
        kind: own || identity.startsWith(presence.localIdPrefix) ? "in_process" : "remote",
        thisReplica: own,
        alive: own,
        lastSeenAt: null,
        slots: own ? (presence.inProcess?.slots ?? null) : null,
        claims: [],
      };
      byIdentity.set(identity, view);
    }
    return view;
  };
  if (presence.inProcess) viewOf(presence.inProcess.identity);
  for (const claim of claims) {
    const { identity, slot } = splitOwner(claim.owner);
    const view = viewOf(identity);
    const lapsed = claim.leaseExpiresAt === null || claim.leaseExpiresAt <= now;
    view.claims.push({
      runId: claim.runId,
      sessionId: claim.sessionId,
      slot,
      epoch: claim.epoch,
      leaseExpiresAt: claim.leaseExpiresAt,
      renewedAt: claim.renewedAt,
      lapsed,
    });
    if (!lapsed) view.alive = true;
    view.lastSeenAt = Math.max(view.lastSeenAt ?? 0, claim.renewedAt);
  }
  for (const seen of presence.remoteSeen) {
    if (!byIdentity.has(seen.identity) && !presence.showIdleRemotes) continue;
    const view = viewOf(seen.identity);
    if (seen.lastSeenAt > now - REMOTE_SEEN_MS) view.alive = true;
    view.lastSeenAt = Math.max(view.lastSeenAt ?? 0, seen.lastSeenAt);
  }
  return [...byIdentity.values()].sort(
    (a, b) =>
      Number(b.thisReplica) - Number(a.thisReplica) ||
      Number(b.alive) - Number(a.alive) ||
      (b.lastSeenAt ?? 0) - (a.lastSeenAt ?? 0) ||
      a.identity.localeCompare(b.identity),
  );
}

/** Which workers are alive and what they hold, as one workspace may see them. */
export class WorkerRoster {
  constructor(
    private readonly store: WorkerRosterStore,
    private readonly presence: WorkerPresence,
    private readonly clock: Clock,
    /** Owners of in-process workers start with this (`local.`), on every replica. */
    private readonly localIdPrefix: string,
  ) {}

  async list(workspaceId: string): Promise<WorkerRosterView> {
    const [claims, pollers] = await Promise.all([
      this.store.heldClaims(workspaceId, ROSTER_LIMIT + 1),
      this.store.pollers(workspaceId, ROSTER_LIMIT + 1),
    ]);
    const now = this.clock.now();
    const workers = rosterOf(
      claims.slice(0, ROSTER_LIMIT),
      {
        inProcess: this.presence.inProcess(),
        remoteSeen: this.presence.remoteSeen(),
        showIdleRemotes: this.presence.showsIdleRemotes(workspaceId),
        localIdPrefix: this.localIdPrefix,
      },
      now,
    );
    return {
      workers,
      selfHosted: pollers
        .slice(0, ROSTER_LIMIT)
        .map((p) => ({ ...p, alive: p.lastPolledAt > now - POLLER_SEEN_MS })),
      truncated: claims.length > ROSTER_LIMIT || pollers.length > ROSTER_LIMIT,
    };
  }
}
