import type { Actor } from "../../../control/adminAudit.js";
import type { EnvironmentRecord } from "../../../coordinator/ports.js";
import { environmentDto, pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { imageBuildDto } from "../imageBuildDto.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createEnvironmentBodySchema,
  listEnvironmentsQuerySchema,
  updateEnvironmentBodySchema,
} from "../schemas/environments.js";

// The environment operations of the Managed wire, transport-free (HTTP routes and in-process client).

/** The environment object, with `awaken_image` when its current revision runs a derived image. */
async function environmentWithImage(deps: ManagedAgentsDeps, env: EnvironmentRecord) {
  const dto = environmentDto(env);
  const build = await deps.imageBuilds?.forRevision(env.id, env.revision);
  return build ? { ...dto, awaken_image: imageBuildDto(build) } : dto;
}

/** `POST /v1/awaken/environments/:id/image/rebuild`: a failed build of the current revision, retried. */
export async function rebuildEnvironmentImage(deps: ManagedAgentsDeps, workspaceId: string, id: string) {
  const env = await deps.environments.get(workspaceId, id);
  if (!deps.imageBuilds) return environmentDto(env);
  await deps.imageBuilds.rebuild(env.id, env.revision);
  return environmentWithImage(deps, env);
}

export async function createEnvironment(deps: ManagedAgentsDeps, by: Actor, rawBody: unknown) {
  const body = parseBody(createEnvironmentBodySchema, rawBody);
  const env = await deps.environments.create(by, {
    name: body.name,
    description: body.description ?? null,
    scope: body.scope ?? null,
    metadata: body.metadata ?? {},
    config: body.config,
  });
  return environmentWithImage(deps, env);
}

export async function retrieveEnvironment(deps: ManagedAgentsDeps, workspaceId: string, id: string) {
  return environmentWithImage(deps, await deps.environments.get(workspaceId, id));
}

export async function updateEnvironment(deps: ManagedAgentsDeps, by: Actor, id: string, rawBody: unknown) {
  const body = parseBody(updateEnvironmentBodySchema, rawBody ?? {});
  const env = await deps.environments.update(by, id, {
    ...(body.name ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.scope ? { scope: body.scope } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    config: body.config ?? null,
  });
  return environmentWithImage(deps, env);
}

export async function listEnvironments(deps: ManagedAgentsDeps, workspaceId: string, rawQuery: RawQuery) {
  const query = parseQuery(listEnvironmentsQuerySchema, rawQuery);
  const page = await deps.environments.list(workspaceId, {
    limit: query.limit,
    cursor: query.page ?? null,
    includeArchived: query.include_archived,
  });
  return pageDto(page, environmentDto);
}

export async function deleteEnvironment(deps: ManagedAgentsDeps, by: Actor, id: string) {
  await deps.environments.delete(by, id);
  return { id, type: "environment_deleted" };
}

export async function archiveEnvironment(deps: ManagedAgentsDeps, by: Actor, id: string) {
  return environmentDto(await deps.environments.archive(by, id));
}
