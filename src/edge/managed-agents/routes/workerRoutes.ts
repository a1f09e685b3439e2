import type { FastifyInstance } from "fastify";
import { principalOf, type RouteAccess } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { workerRosterQuerySchema } from "../schemas/workers.js";
import { workerRosterDto } from "../workerDto.js";

const ADMIN: RouteAccess = { accepts: ["api_key"] };

/**
 * `GET /v1/awaken/workers` (admin keys, an Awaken extension): the workers holding the workspace's
 * runs (claims from the database, so every replica answers alike) with this replica's in-process
 * worker and its slots, remote workers seen through this replica, and self-hosted environments'
 * pollers with the work they hold. Only the workspace's own runs and environments appear.
 */
export function workerRoutes(app: FastifyInstance, deps: EdgeServices): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/workers", { config: { access: ADMIN } }, async (request) => {
    parseQuery(workerRosterQuerySchema, request.query);
    return workerRosterDto(await deps.workers.list(principalOf(request).workspaceId));
  });
}
