import type { FastifyInstance } from "fastify";
import { decodeCommitted } from "../../../coordinator/factCodec.js";
import { isoTime } from "../../../kernel/clock.js";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { RUN_END_TYPES, runEnds } from "../runOutcomes.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { sessionOutcomesQuerySchema } from "../schemas/sessionOutcomes.js";

/** How far back a session's run facts are read: enough for its last run's start and error. */
const FACTS_READ = 40;

/**
 * `GET /v1/awaken/sessions/outcomes?session_ids[]=…` (runtime keys and tokens that reach the
 * sessions, an Awaken extension): how each session's last run ended — its stop reason, whether it
 * failed (`retries_exhausted`), was interrupted or completed, and the last error it committed. The
 * wire's status stays `idle` for all of them; this is read from each session's committed history,
 * never stored. A session the caller cannot reach is an error, as reading it would be.
 */
export function sessionOutcomeRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/sessions/outcomes", async (request) => {
    const q = parseQuery(sessionOutcomesQuerySchema, request.query);
    const { workspaceId } = principalOf(request);
    const services = servicesFor(deps, request);
    const ids = [...new Set(q.session_ids)];
    const data = await Promise.all(
      ids.map(async (id) => {
        const session = await services.sessions.get(workspaceId, id);
        const page = await deps.stream.history.listEvents(session.id, session.threadId, {
          limit: FACTS_READ,
          cursor: null,
          order: "desc",
          types: [...RUN_END_TYPES],
        });
        const last = runEnds(page.data.map(decodeCommitted).reverse()).at(-1);
        return {
          type: "session_outcome",
          session_id: session.id,
          last_run: last
            ? {
                outcome: last.outcome,
                stop_reason: last.stopReason,
                error: last.error,
                started_at: last.startedAt === null ? null : isoTime(last.startedAt),
                ended_at: isoTime(last.endedAt),
              }
            : null,
        };
      }),
    );
    return { data };
  });
}
