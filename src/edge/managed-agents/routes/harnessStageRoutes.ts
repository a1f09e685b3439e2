import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { scanThread } from "./resourceUsageRoutes.js";

/** The ACP Brain's launch stages, committed as internal facts of this type. */
const HARNESS_STAGE_TYPE = "awaken.harness_stage";

/**
 * `GET /v1/awaken/sessions/{session_id}/harness` (an Awaken extension): the launches of the
 * session's ACP harness Brain, in commit order: each stage (installing, launching, initializing,
 * ready, failed) with its runtime, when it was committed and what it recorded (the attempt, the
 * harness session, the harness's own name and version, a failure's reason). `current` is the last
 * stage. Read from committed history only; a session whose agent is no harness has none.
 */
export function harnessStageRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.get<{ Params: { session_id: string } }>("/v1/awaken/sessions/:session_id/harness", async (request) => {
    const { workspaceId } = principalOf(request);
    const session = await servicesFor(deps, request).sessions.get(workspaceId, request.params.session_id);
    const stages: Array<Record<string, unknown>> = [];
    await scanThread(deps, session.threadId, 0, (fact) => {
      if (fact.type === HARNESS_STAGE_TYPE)
        stages.push({ ...fact.body, processed_at: new Date(fact.createdAt).toISOString() });
      return "more";
    });
    return { type: "harness_stages", data: stages, current: stages.at(-1)?.stage ?? null };
  });
}
