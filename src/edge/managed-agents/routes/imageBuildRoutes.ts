import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { pageDto } from "../dto.js";
import { workspaceImageBuildDto } from "../imageBuildDto.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listImageBuildsQuerySchema } from "../schemas/imageBuilds.js";

/**
 * `GET /v1/awaken/image_builds`, an Awaken extension: the container image builds the caller's
 * workspace's environments run, newest first, each with the workspace's environments that use it.
 * A server without image builds answers an empty page.
 */
export function imageBuildRoutes(app: FastifyInstance, deps: Pick<EdgeServices, "imageBuilds">): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/image_builds", async (request) => {
    const q = parseQuery(listImageBuildsQuerySchema, request.query);
    if (!deps.imageBuilds) return { data: [], next_page: null };
    const page = await deps.imageBuilds.listForWorkspace(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
    });
    return pageDto(page, workspaceImageBuildDto);
  });
}
