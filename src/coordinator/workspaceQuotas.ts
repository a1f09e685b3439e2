import { BoundedCache } from "../kernel/boundedCache.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";

/**
 * Per-workspace limits an operator sets, checked at admission through one port: the seam where a
 * hosted offering's entitlements would plug in. A quota admits or refuses new work (a session, a
 * message that starts a turn); it never changes a session, and work it admitted runs to its end.
 * What it counts is read from the authority's own records (runs, sessions, committed usage facts).
 */

export interface WorkspaceLimits {
  /** Runs queued or executing at once. */
  concurrentRuns?: number;
  /** Sessions created in the last hour. */
  sessionsPerHour?: number;
  /** Model tokens (input, output and cache) committed in the last 24 hours. */
  tokensPerDay?: number;
  /** List cost committed in the last 24 hours, in cents. */
  listCostPerDayCents?: number;
}

export interface QuotaConfig {
  /** Every workspace's limits, unless it has its own. */
  default: WorkspaceLimits;
  workspaces: Record<string, WorkspaceLimits>;
}

/** Committed usage of a workspace over a window, from its usage facts. */
export interface WindowUsage {
  tokens: number;
  listCostCents: number;
}

/** What admission counts, read from the authority's records. */
export interface QuotaUsageReader {
  activeRuns(workspaceId: string): Promise<number>;
  sessionsCreatedSince(workspaceId: string, since: number): Promise<number>;
  /** Usage committed at `since` or later, and before `until` when given. */
  usageSince(workspaceId: string, since: number, until?: number): Promise<WindowUsage>;
  /**
   * The same usage, per user profile the sessions are attributed to (sessions attributed to none
   * are left out), for the usage route's breakdown; absent: the reader cannot say.
   */
  usageByUserProfileSince?(workspaceId: string, since: number): Promise<Map<string, WindowUsage>>;
}

/** The admission port: throws `quota_exceeded` (429) naming the limit, or admits. */
export interface AdmissionQuotas {
  /** Before a session is created. */
  admitSession(workspaceId: string): Promise<void>;
  /** Before input that starts a turn (a message, an outcome's definition) is entered. */
  admitTurn(workspaceId: string): Promise<void>;
  /** The limits that apply to a workspace (none: an empty object). */
  limitsOf(workspaceId: string): WorkspaceLimits;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/**
 * A window's usage is read at most this often per workspace: a day's usage facts are a scan, and
 * a few seconds of staleness only lets work through that a check a moment earlier would have.
 */
const USAGE_FRESH_MS = 5_000;
const USAGE_CACHED_WORKSPACES = 10_000;

export class WorkspaceQuotas implements AdmissionQuotas {
  private readonly usage: BoundedCache<string, WindowUsage>;

  constructor(
    private readonly config: QuotaConfig,
    private readonly reader: QuotaUsageReader,
    private readonly clock: Clock,
  ) {
    this.usage = new BoundedCache({ maxEntries: USAGE_CACHED_WORKSPACES, ttlMs: USAGE_FRESH_MS, clock });
  }

  limitsOf(workspaceId: string): WorkspaceLimits {
    return this.config.workspaces[workspaceId] ?? this.config.default;
  }

  async admitSession(workspaceId: string): Promise<void> {
    const limits = this.limitsOf(workspaceId);
    if (limits.sessionsPerHour !== undefined) {
      const created = await this.reader.sessionsCreatedSince(workspaceId, this.clock.now() - HOUR_MS);
      if (created >= limits.sessionsPerHour)
        throw exceeded(
          `sessions_per_hour (${limits.sessionsPerHour}): ${created} sessions were created in the last hour`,
        );
    }
    await this.admitUsage(workspaceId, limits);
  }

  async admitTurn(workspaceId: string): Promise<void> {
    const limits = this.limitsOf(workspaceId);
    if (limits.concurrentRuns !== undefined) {
      const active = await this.reader.activeRuns(workspaceId);
      if (active >= limits.concurrentRuns)
        throw exceeded(`concurrent_runs (${limits.concurrentRuns}): ${active} runs are queued or executing`);
    }
    await this.admitUsage(workspaceId, limits);
  }

  private async admitUsage(workspaceId: string, limits: WorkspaceLimits): Promise<void> {
    if (limits.tokensPerDay === undefined && limits.listCostPerDayCents === undefined) return;
    const used = await this.dayUsage(workspaceId);
    if (limits.tokensPerDay !== undefined && used.tokens >= limits.tokensPerDay)
      throw exceeded(
        `tokens_per_day (${limits.tokensPerDay}): ${used.tokens} tokens were used in the last 24 hours`,
      );
    if (limits.listCostPerDayCents !== undefined && used.listCostCents >= limits.listCostPerDayCents) {
      throw exceeded(
        `list_cost_per_day_usd (${dollars(limits.listCostPerDayCents)}): ${dollars(used.listCostCents)} was used in the last 24 hours`,
      );
    }
  }

  private async dayUsage(workspaceId: string): Promise<WindowUsage> {
    const known = this.usage.get(workspaceId);
    if (known) return known;
    const value = await this.reader.usageSince(workspaceId, this.clock.now() - DAY_MS);
    this.usage.set(workspaceId, value);
    return value;
  }
}

function exceeded(limit: string): AwakenError {
  return new AwakenError(
    "quota_exceeded",
    `This workspace reached its limit ${limit}. Work already running goes on; try again later, or ask the operator to raise the limit.`,
    { retryable: true },
  );
}

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
