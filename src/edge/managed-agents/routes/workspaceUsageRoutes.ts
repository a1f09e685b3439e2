import type { FastifyInstance } from "fastify";
import type { WindowUsage, WorkspaceLimits } from "../../../coordinator/workspaceQuotas.js";
import { isoTime } from "../../../kernel/clock.js";
import { monetaryAmount } from "../../../kernel/listPrices.js";
import { principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { workspaceUsageQuerySchema } from "../schemas/workspaceUsage.js";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const DEFAULT_DAYS = 7;

/**
 * `GET /v1/awaken/usage?days=N` (admin keys, an Awaken extension): the caller's workspace usage from
 * its committed usage facts — tokens and list cost per UTC day (today last), and now: runs queued or
 * executing, sessions created in the last hour, the last 24 hours' tokens and list cost — beside the
 * quotas the operator set for it (null: none), and the days' usage per user profile the sessions
 * are attributed to (`user_profiles`). What workspace quotas admit by, read the same way.
 */
export function workspaceUsageRoutes(
  app: FastifyInstance,
  deps: Pick<EdgeServices, "usage" | "clock">,
): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/usage", async (request) => {
    const { days = DEFAULT_DAYS } = parseQuery(workspaceUsageQuerySchema, request.query);
    const { workspaceId } = principalOf(request);
    const { reader, limitsOf } = deps.usage;
    const now = deps.clock.now();
    const today = now - (now % DAY_MS);
    const starts = Array.from({ length: days }, (_, i) => today - (days - 1 - i) * DAY_MS);
    const perDay = await Promise.all(
      starts.map((start) => reader.usageSince(workspaceId, start, start + DAY_MS)),
    );
    const [activeRuns, sessionsLastHour, lastDay, byProfile] = await Promise.all([
      reader.activeRuns(workspaceId),
      reader.sessionsCreatedSince(workspaceId, now - HOUR_MS),
      reader.usageSince(workspaceId, now - DAY_MS),
      reader.usageByUserProfileSince?.(workspaceId, starts[0] ?? today) ?? new Map<string, WindowUsage>(),
    ]);
    const limits = limitsOf(workspaceId);
    return {
      type: "workspace_usage",
      workspace_id: workspaceId,
      days: starts.map((start, i) => ({
        date: isoTime(start).slice(0, 10),
        tokens: perDay[i]?.tokens ?? 0,
        list_cost: monetaryAmount(BigInt(perDay[i]?.listCostCents ?? 0)),
      })),
      now: {
        active_runs: activeRuns,
        sessions_last_hour: sessionsLastHour,
        tokens_last_24h: lastDay.tokens,
        list_cost_last_24h: monetaryAmount(BigInt(lastDay.listCostCents)),
      },
      limits: limits === null ? null : limitsDto(limits),
      // The same days' usage per user profile the sessions are attributed to, the most tokens first.
      user_profiles: [...byProfile]
        .sort(([a, x], [b, y]) => y.tokens - x.tokens || (a < b ? -1 : 1))
        .map(([id, usage]) => ({
          user_profile_id: id,
          tokens: usage.tokens,
          list_cost: monetaryAmount(BigInt(usage.listCostCents)),
        })),
    };
  });
}

function limitsDto(limits: WorkspaceLimits): Record<string, unknown> {
  return {
    concurrent_runs: limits.concurrentRuns ?? null,
    sessions_per_hour: limits.sessionsPerHour ?? null,
    tokens_per_day: limits.tokensPerDay ?? null,
    list_cost_per_day:
      limits.listCostPerDayCents === undefined ? null : monetaryAmount(BigInt(limits.listCostPerDayCents)),
  };
}
