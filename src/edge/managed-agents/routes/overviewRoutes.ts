import type { FastifyInstance } from "fastify";
import { decodeCommitted } from "../../../coordinator/factCodec.js";
import { STORED_TYPE } from "../../../coordinator/facts/storedTypes.js";
import type { CommittedTypedFact } from "../../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../../coordinator/ports.js";
import { isoTime } from "../../../kernel/clock.js";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import {
  HOUR_MS,
  OVERVIEW_HOURS,
  percentile,
  runLatencies,
  runsByHour,
  tokensByModel,
} from "../overviewDto.js";
import { RUN_END_TYPES, runEnds } from "../runOutcomes.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { overviewQuerySchema } from "../schemas/sessionOutcomes.js";

/** Bounds on one request's reads: the newest sessions, and each one's facts in the window. */
const MAX_SESSIONS = 200;
const SESSION_PAGE = 100;
const FACT_PAGE = 500;
const MAX_FACTS_PER_SESSION = 5_000;
const PARALLEL_READS = 4;
const LIVE_LIMIT = 100;

const OVERVIEW_TYPES = [...RUN_END_TYPES, STORED_TYPE.model_request_end];

/**
 * `GET /v1/awaken/overview` (runtime keys, an Awaken extension): the Console's home, folded per
 * request from the committed history of the sessions the caller reaches — runs ended per hour by
 * outcome over the last 24 h, run latency p50/p99, tokens by provider and model, and the sessions
 * running now. A read model: nothing is stored, and the scoped session list keeps another
 * workspace's (or an unreached agent's) sessions out. Reads the newest `MAX_SESSIONS` sessions
 * touched in the window; `truncated` says when there were more.
 */
export function overviewRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/overview", async (request) => {
    parseQuery(overviewQuerySchema, request.query);
    const { workspaceId } = principalOf(request);
    const services = servicesFor(deps, request);
    const now = deps.clock.now();
    const since = Math.floor(now / HOUR_MS) * HOUR_MS - (OVERVIEW_HOURS - 1) * HOUR_MS;

    const touched: SessionRecord[] = [];
    let cursor: string | null = null;
    let scanned = 0;
    let truncated = false;
    do {
      const page = await services.sessions.list(workspaceId, {
        limit: SESSION_PAGE,
        cursor,
        order: "desc",
        includeArchived: true,
      });
      for (const session of page.data) if (session.updatedAt >= since) touched.push(session);
      scanned += page.data.length;
      cursor = page.nextCursor;
      if (cursor !== null && scanned >= MAX_SESSIONS) truncated = true;
    } while (cursor !== null && scanned < MAX_SESSIONS);

    const facts: CommittedTypedFact[][] = [];
    for (let i = 0; i < touched.length; i += PARALLEL_READS) {
      const batch = touched.slice(i, i + PARALLEL_READS);
      facts.push(...(await Promise.all(batch.map((s) => factsSince(deps, s, since)))));
    }
    const ends = facts.flatMap((sessionFacts) => runEnds(sessionFacts));
    const latencies = runLatencies(ends);
    const live = await services.sessions.list(workspaceId, {
      limit: LIVE_LIMIT,
      cursor: null,
      order: "desc",
      includeArchived: false,
      statuses: ["running", "rescheduling"],
    });
    return {
      type: "overview",
      since: isoTime(since),
      now: isoTime(now),
      runs_by_hour: runsByHour(ends, now),
      run_latency_ms: {
        runs: latencies.length,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
      },
      tokens: tokensByModel(facts.flat()),
      live_sessions: live.data.map((s) => ({ id: s.id, title: s.title, status: s.status })),
      live_sessions_truncated: live.nextCursor !== null,
      sessions_read: touched.length,
      truncated,
    };
  });
}

async function factsSince(
  deps: ManagedAgentsDeps,
  session: SessionRecord,
  since: number,
): Promise<CommittedTypedFact[]> {
  const out: CommittedTypedFact[] = [];
  let cursor: string | null = null;
  do {
    const page = await deps.stream.history.listEvents(session.id, session.threadId, {
      limit: FACT_PAGE,
      cursor,
      order: "asc",
      types: OVERVIEW_TYPES,
      createdAt: { gte: since },
    });
    out.push(...page.data.map(decodeCommitted));
    cursor = page.nextCursor;
  } while (cursor !== null && out.length < MAX_FACTS_PER_SESSION);
  return out;
}
