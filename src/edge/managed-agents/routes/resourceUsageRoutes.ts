import type { FastifyInstance } from "fastify";
import type { CommittedFact } from "../../../coordinator/facts.js";
import { AwakenError } from "../../../kernel/errors.js";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import {
  MEMORY_WRITTEN_BACK_TYPE,
  RESOURCES_REALIZED_TYPE,
  type RunResourceUsage,
  realizationUsage,
  writeBackUsage,
} from "../resourceUsageDto.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listResourceUsageQuerySchema } from "../schemas/resourceUsage.js";

type UsageParams = { Params: { session_id: string }; Querystring: RawQuery };

const CURSOR_LIST = "resource_usage";

/**
 * `GET /v1/awaken/sessions/{session_id}/resource_usage` (runtime keys and access tokens that
 * reach the session, an Awaken extension): what each run of the session saw, in commit order — the
 * files (digest, size, mount path), memory stores (access), repositories (whether a token was
 * given, never the token) and exact skill versions it realized at its start, and the outcomes of
 * the memory write-backs committed after that (written, deleted, conflict or refused with the
 * reason). History records what each run saw: a session's resources changed later never rewrite
 * an earlier run's record. A run that had nothing to realize has no record.
 *
 * Read from the session's committed history: one page is the next `limit` realizations after the
 * cursor, each with the write-backs committed before the next one (a session runs one run at a
 * time, so those are the same run's).
 */
export function resourceUsageRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.get<UsageParams>("/v1/awaken/sessions/:session_id/resource_usage", async (request) => {
    const q = parseQuery(listResourceUsageQuerySchema, request.query);
    const { workspaceId } = principalOf(request);
    const session = await servicesFor(deps, request).sessions.get(workspaceId, request.params.session_id);
    const afterSeq = decodeUsageCursor(q.page);
    const runs: RunResourceUsage[] = [];
    let nextSeq: number | null = null;
    await scanThread(deps, session.threadId, afterSeq, (fact) => {
      if (fact.type === RESOURCES_REALIZED_TYPE) {
        if (runs.length === q.limit) {
          nextSeq = fact.seq;
          return "stop";
        }
        runs.push(realizationUsage(fact));
      } else if (fact.type === MEMORY_WRITTEN_BACK_TYPE) {
        // A write-back before any realization on this page belongs to the previous page's run.
        runs.at(-1)?.memory_write_backs.push(writeBackUsage(fact));
      }
      return "more";
    });
    return {
      data: runs,
      next_page: nextSeq === null ? null : encodeUsageCursor((nextSeq as number) - 1),
    };
  });
}

const SCAN_PAGE = 500;

/**
 * The thread's committed facts after `afterSeq` as stored (an internal fact's body is its record),
 * a page at a time, until `visit` stops: History and the event list skip internal facts.
 */
export async function scanThread(
  deps: ManagedAgentsDeps,
  threadId: string,
  afterSeq: number,
  visit: (fact: CommittedFact) => "more" | "stop",
): Promise<void> {
  let cursor = afterSeq;
  for (;;) {
    const page = await deps.stream.history.readThread(threadId, cursor, SCAN_PAGE);
    for (const fact of page) if (visit(fact) === "stop") return;
    if (page.length < SCAN_PAGE) return;
    cursor = page.at(-1)!.seq;
  }
}

/** The page cursor: the seq the next page reads after, opaque to clients. */
function encodeUsageCursor(afterSeq: number): string {
  return Buffer.from(JSON.stringify({ list: CURSOR_LIST, after: afterSeq })).toString("base64url");
}

function decodeUsageCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === "") return 0;
  let value: unknown = null;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = null;
  }
  const position = value as { list?: unknown; after?: unknown } | null;
  if (
    typeof position !== "object" ||
    position === null ||
    position.list !== CURSOR_LIST ||
    !Number.isSafeInteger(position.after) ||
    (position.after as number) < 0
  )
    throw new AwakenError(
      "invalid_request",
      "page: not a cursor returned by this list; pass the next_page value unchanged",
    );
  return position.after as number;
}
