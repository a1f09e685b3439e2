import { sql } from "kysely";
import { decodeFact, storedTypesOf } from "../../coordinator/factCodec.js";
import type { QuotaUsageReader, WindowUsage } from "../../coordinator/workspaceQuotas.js";
import { requestListCost, wholeCents } from "../../kernel/listPrices.js";
import { rowFacts } from "./appendFacts.js";
import type { DbOrTx } from "./db.js";

/** The stored types that carry model usage: requests, a compaction's summary, a grader's verdict. */
const USAGE_TYPES = new Set(
  storedTypesOf("model_request_end", "context_compacted", "outcome_evaluation_end"),
);
const USAGE_ROW_PATTERNS = [...USAGE_TYPES].map((type) => `%"${type}"%`);

/**
 * What workspace quotas count, read from the authority's own records on either dialect: runs
 * queued or executing, sessions created, and the usage facts committed in a window (found by
 * their stored types' text, then summed fact by fact, as the session projection counts them).
 */
export class SqlQuotaUsage implements QuotaUsageReader {
  constructor(private readonly db: DbOrTx) {}

  async activeRuns(workspaceId: string): Promise<number> {
    const row = await this.db
      .selectFrom("runs as r")
      .innerJoin("sessions as s", "s.id", "r.session_id")
      .select(sql<number | string>`count(*)`.as("n"))
      .where("s.workspace_id", "=", workspaceId)
      .where("r.state", "in", ["queued", "claimed"])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async sessionsCreatedSince(workspaceId: string, since: number): Promise<number> {
    const row = await this.db
      .selectFrom("sessions")
      .select(sql<number | string>`count(*)`.as("n"))
      .where("workspace_id", "=", workspaceId)
      .where("created_at", ">=", since)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async usageSince(workspaceId: string, since: number, until?: number): Promise<WindowUsage> {
    const rows = await this.usageRows(workspaceId, since, until, false);
    return sumUsage(rows);
  }

  async usageByUserProfileSince(workspaceId: string, since: number): Promise<Map<string, WindowUsage>> {
    const rows = await this.usageRows(workspaceId, since, undefined, true);
    const byProfile = new Map<string, typeof rows>();
    for (const row of rows) {
      if (row.user_profile_id === null) continue;
      const list = byProfile.get(row.user_profile_id) ?? [];
      list.push(row);
      byProfile.set(row.user_profile_id, list);
    }
    return new Map([...byProfile].map(([id, list]) => [id, sumUsage(list)]));
  }

  private usageRows(workspaceId: string, since: number, until: number | undefined, attributedOnly: boolean) {
    let query = this.db
      .selectFrom("commits as c")
      .innerJoin("sessions as s", "s.id", "c.session_id")
      .select([
        "c.thread_id",
        "c.base_version",
        "c.session_id",
        "c.facts_json",
        "c.created_at",
        "s.user_profile_id",
      ])
      .where("s.workspace_id", "=", workspaceId)
      .where("c.created_at", ">=", since);
    if (until !== undefined) query = query.where("c.created_at", "<", until);
    if (attributedOnly) query = query.where("s.user_profile_id", "is not", null);
    return query
      .where((eb) => eb.or(USAGE_ROW_PATTERNS.map((pattern) => eb("c.facts_json", "like", pattern))))
      .execute();
  }
}

/** Tokens and list cost of the usage facts in `rows`, summed fact by fact as the session projection counts them. */
function sumUsage(rows: Parameters<typeof rowFacts>[0][]): WindowUsage {
  let tokens = 0;
  let nanoCents = 0n;
  for (const row of rows) {
    for (const stored of rowFacts(row)) {
      if (!USAGE_TYPES.has(stored.type)) continue;
      const fact = decodeFact(stored);
      if (
        fact.kind !== "model_request_end" &&
        fact.kind !== "context_compacted" &&
        fact.kind !== "outcome_evaluation_end"
      )
        continue;
      const { usage } = fact;
      tokens +=
        usage.inputTokens + usage.outputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
      // A grader's evaluation made without a request (an interrupt, a crash) names no model.
      nanoCents += (fact.model ? requestListCost(fact.model, usage) : null) ?? 0n;
    }
  }
  return { tokens, listCostCents: Number(wholeCents(nanoCents)) };
}
