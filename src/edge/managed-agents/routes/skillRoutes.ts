import type { FastifyInstance, FastifyRequest } from "fastify";
import type { UploadedSkillFile } from "../../../resources/skills/skillBundle.js";
import type { SkillService } from "../../../resources/skills/skillService.js";
import { principalOf } from "../../http/auth.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { readMultipartUpload, requireMultipart } from "../multipartUploads.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listSkillsQuerySchema, listSkillVersionsQuerySchema } from "../schemas/skills.js";
import { skillDto, skillVersionDto } from "../skillDto.js";

type SkillParams = { Params: { skill_id: string }; Querystring: RawQuery };
type VersionParams = { Params: { skill_id: string; version: string } };

/**
 * Custom skills and their versions (`client.beta.skills` and `client.skills`: the same paths).
 * Uploads are multipart: `files[]` parts named with the bundle's paths, or one `.zip`.
 */
export function skillRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const skills = () => deps.resources.skills;
  const upload = { preParsing: requireMultipart };

  app.post("/v1/skills", upload, async (request) => {
    const { files, fields } = await readBundle(request, skills(), ["display_name"]);
    const { skill } = await skills().create(principalOf(request).workspaceId, {
      files,
      displayName: fields.get("display_name") ?? null,
    });
    return skillDto(skill);
  });

  app.get<SkillParams>("/v1/skills/:skill_id", async (request) =>
    skillDto(await skills().retrieve(principalOf(request).workspaceId, request.params.skill_id)),
  );

  app.get<{ Querystring: RawQuery }>("/v1/skills", async (request) => {
    const query = parseQuery(listSkillsQuerySchema, request.query);
    const page = await skills().list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      source: query.source ?? null,
    });
    return pageDto(page, skillDto);
  });

  app.delete<SkillParams>("/v1/skills/:skill_id", async (request) => {
    await skills().delete(principalOf(request).workspaceId, request.params.skill_id);
    return { id: request.params.skill_id, type: "skill_deleted" };
  });

  app.post<SkillParams>("/v1/skills/:skill_id/versions", upload, async (request) => {
    const { files } = await readBundle(request, skills(), []);
    const version = await skills().createVersion(
      principalOf(request).workspaceId,
      request.params.skill_id,
      files,
    );
    return skillVersionDto(version);
  });

  app.get<VersionParams>("/v1/skills/:skill_id/versions/:version", async (request) => {
    const { skill_id, version } = request.params;
    return skillVersionDto(
      await skills().retrieveVersion(principalOf(request).workspaceId, skill_id, version),
    );
  });

  app.get<SkillParams>("/v1/skills/:skill_id/versions", async (request) => {
    const query = parseQuery(listSkillVersionsQuerySchema, request.query);
    const page = await skills().listVersions(principalOf(request).workspaceId, request.params.skill_id, {
      limit: query.limit,
      cursor: query.page ?? null,
    });
    return pageDto(page, skillVersionDto);
  });

  app.delete<VersionParams>("/v1/skills/:skill_id/versions/:version", async (request) => {
    const { skill_id, version } = request.params;
    await skills().deleteVersion(principalOf(request).workspaceId, skill_id, version);
    return { id: version, type: "skill_version_deleted" };
  });

  // The version as a zip of its bundle (beta only in the SDK; the path serves both).
  app.get<VersionParams>("/v1/skills/:skill_id/versions/:version/content", async (request, reply) => {
    const { skill_id, version } = request.params;
    const archive = await skills().download(principalOf(request).workspaceId, skill_id, version);
    return reply
      .header("content-type", "application/zip")
      .header("content-disposition", `attachment; filename="${archive.filename}"`)
      .send(Buffer.from(archive.bytes));
  });
}

/** The bundle's parts (`files[]`, or `files` from a plain form) and the text fields named. */
async function readBundle(
  request: FastifyRequest,
  skills: SkillService,
  textFields: readonly string[],
): Promise<{ files: UploadedSkillFile[]; fields: Map<string, string> }> {
  const form = await readMultipartUpload(request, {
    fileFields: { "files[]": { many: true }, files: { many: true } },
    textFields,
    // A part may be the zipped bundle, so one part may be as large as the whole bundle.
    maxFileBytes: skills.limits.maxTotalBytes,
    maxTotalBytes: skills.limits.maxTotalBytes,
    allowEmptyFiles: true,
  });
  return {
    files: form.files.map((file) => ({ path: file.filename, bytes: file.bytes })),
    fields: form.fields,
  };
}
