import type { FastifyInstance } from "fastify";
import { DEFAULT_RECLAIM_MS } from "../../../coordinator/workLease.js";
import type { WorkCaller } from "../../../coordinator/workQueueService.js";
import { type AuthPrincipal, principalOf, type RouteAccess } from "../../http/auth.js";
import { onReplyClosed } from "../../http/closeListener.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  heartbeatQuerySchema,
  listWorkQuerySchema,
  pollWorkQuerySchema,
  stopWorkBodySchema,
  updateWorkBodySchema,
} from "../schemas/work.js";
import { workDto, workStatsDto } from "../selfHostedDto.js";

type EnvParams = { Params: { environment_id: string }; Querystring: RawQuery };
type WorkParams = { Params: { environment_id: string; work_id: string }; Querystring: RawQuery };

// Who may call what (wire §2.8's credential column). An environment key and a sessions token must
// belong to the environment in the path; a sessions token only to its own work item.
const ENV = { environmentParam: "environment_id" } as const;
const ITEM = { environmentParam: "environment_id", workParam: "work_id" } as const;
const ACCESS = {
  poll: { accepts: ["environment_key"], ...ENV },
  ack: { accepts: ["environment_key"], ...ITEM },
  heartbeat: { accepts: ["sessions_token", "environment_key"], ...ITEM },
  stop: { accepts: ["sessions_token", "environment_key", "api_key"], ...ITEM },
  // The wire infers "API key"; a worker's own key reads its queue's depth too.
  stats: { accepts: ["api_key", "environment_key"], ...ENV },
  list: { accepts: ["environment_key"], ...ENV },
  retrieve: { accepts: ["api_key"] },
  update: { accepts: ["api_key"] },
} satisfies Record<string, RouteAccess>;

function callerOf(principal: AuthPrincipal): WorkCaller {
  return principal.kind === "sessions_token"
    ? { kind: "sessions_token", workId: principal.workId, epoch: principal.epoch }
    : { kind: principal.kind };
}

/** `client.beta.environments.work.*` for self_hosted environments (wire §2.8, §4). */
export function workRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  const work = deps.workQueue;

  app.get<EnvParams>(
    "/v1/environments/:environment_id/work/poll",
    { config: { access: ACCESS.poll } },
    async (request, reply) => {
      const q = parseQuery(pollWorkQuerySchema, request.query);
      const workerId = request.headers["anthropic-worker-id"];
      // A worker that hangs up mid long-poll stops waiting; an item taken for it anyway is pending
      // and returns to the queue after `reclaim_older_than_ms`.
      const gone = new AbortController();
      onReplyClosed(reply, "work poll", () => {
        if (!reply.raw.writableEnded) gone.abort();
      });
      const polled = await work.poll(principalOf(request).workspaceId, request.params.environment_id, {
        blockMs: q.block_ms ?? 0,
        reclaimOlderThanMs: q.reclaim_older_than_ms ?? DEFAULT_RECLAIM_MS,
        workerId: typeof workerId === "string" && workerId.trim() ? workerId.trim().slice(0, 256) : null,
        signal: gone.signal,
      });
      // Wire §1.2: 204 (or JSON null) means "no work"; the SDK returns null for both.
      if (!polled) return reply.code(204).send();
      return workDto(polled.item, polled.secret);
    },
  );

  app.get<EnvParams>(
    "/v1/environments/:environment_id/work/stats",
    { config: { access: ACCESS.stats } },
    async (request) =>
      workStatsDto(await work.stats(principalOf(request).workspaceId, request.params.environment_id)),
  );

  app.get<EnvParams>(
    "/v1/environments/:environment_id/work",
    { config: { access: ACCESS.list } },
    async (request) => {
      const q = parseQuery(listWorkQuerySchema, request.query);
      const page = await work.list(principalOf(request).workspaceId, request.params.environment_id, {
        limit: q.limit,
        cursor: q.page ?? null,
      });
      return pageDto(page, (item) => workDto(item));
    },
  );

  app.get<WorkParams>(
    "/v1/environments/:environment_id/work/:work_id",
    { config: { access: ACCESS.retrieve } },
    async (request) =>
      workDto(
        await work.get(
          principalOf(request).workspaceId,
          request.params.environment_id,
          request.params.work_id,
        ),
      ),
  );

  app.post<WorkParams>(
    "/v1/environments/:environment_id/work/:work_id",
    { config: { access: ACCESS.update } },
    async (request) => {
      const body = parseBody(updateWorkBodySchema, request.body);
      const { environment_id, work_id } = request.params;
      return workDto(
        await work.update(principalOf(request).workspaceId, environment_id, work_id, body.metadata),
      );
    },
  );

  app.post<WorkParams>(
    "/v1/environments/:environment_id/work/:work_id/ack",
    { config: { access: ACCESS.ack } },
    async (request) => {
      const { environment_id, work_id } = request.params;
      return workDto(await work.ack(principalOf(request).workspaceId, environment_id, work_id));
    },
  );

  app.post<WorkParams>(
    "/v1/environments/:environment_id/work/:work_id/heartbeat",
    { config: { access: ACCESS.heartbeat } },
    async (request) => {
      const q = parseQuery(heartbeatQuerySchema, request.query);
      const principal = principalOf(request);
      const { environment_id, work_id } = request.params;
      return work.heartbeat(principal.workspaceId, environment_id, work_id, callerOf(principal), {
        expected: q.expected_last_heartbeat,
        desiredTtlSeconds: q.desired_ttl_seconds,
      });
    },
  );

  app.post<WorkParams>(
    "/v1/environments/:environment_id/work/:work_id/stop",
    { config: { access: ACCESS.stop } },
    async (request) => {
      const body = parseBody(stopWorkBodySchema, request.body ?? {});
      const principal = principalOf(request);
      const { environment_id, work_id } = request.params;
      return workDto(
        await work.stop(
          principal.workspaceId,
          environment_id,
          work_id,
          callerOf(principal),
          body.force === true,
        ),
      );
    },
  );
}
