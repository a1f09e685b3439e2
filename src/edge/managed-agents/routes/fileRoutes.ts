import type { FastifyInstance } from "fastify";
import { invalid } from "../../../kernel/errors.js";
import { EXPIRES_IN_SECONDS } from "../../../resources/files/fileService.js";
import { principalOf } from "../../http/auth.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { attachmentDisposition, fileDto } from "../fileDto.js";
import { finalPathComponent, readMultipartUpload, requireMultipart } from "../multipartUploads.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listFilesQuerySchema, parseExpiresInSeconds } from "../schemas/files.js";

type FileParams = { Params: { file_id: string } };

/**
 * Files (`client.files` and `client.beta.files`, one set of paths): multipart upload, list,
 * metadata, content, delete. Every lookup is within the caller's workspace.
 */
export function fileRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: routes are registered before (and without) the services in some tests.
  const service = () => deps.resources.files;

  app.post("/v1/files", { preParsing: requireMultipart }, async (request) => {
    const files = service();
    const form = await readMultipartUpload(request, {
      fileFields: { file: { many: false } },
      textFields: ["expires_in_seconds"],
      maxFileBytes: files.limits.maxFileBytes,
    });
    const file = form.files[0];
    if (!file) throw invalid("file: is required; send the file as a multipart part named file");
    const record = await files.upload(principalOf(request).workspaceId, {
      filename: finalPathComponent(file.filename),
      declaredType: file.declaredType,
      bytes: file.bytes,
      expiresInSeconds: parseExpiresInSeconds(
        form.fields.get("expires_in_seconds"),
        EXPIRES_IN_SECONDS.min,
        EXPIRES_IN_SECONDS.max,
      ),
      scopeId: null,
    });
    return fileDto(record);
  });

  app.get<{ Querystring: RawQuery }>("/v1/files", async (request) => {
    const query = parseQuery(listFilesQuerySchema, request.query);
    const workspaceId = principalOf(request).workspaceId;
    const scopeId = query.scope_id ?? null;
    const page =
      query.ids !== undefined
        ? await service().listByIds(workspaceId, query.ids, scopeId)
        : await service().list(workspaceId, {
            limit: query.limit ?? 20,
            cursor: query.page ?? null,
            scopeId,
          });
    return pageDto(page, fileDto);
  });

  app.get<FileParams>("/v1/files/:file_id", async (request) =>
    fileDto(await service().get(principalOf(request).workspaceId, request.params.file_id)),
  );

  app.get<FileParams>("/v1/files/:file_id/content", async (request, reply) => {
    const { record, bytes } = await service().download(
      principalOf(request).workspaceId,
      request.params.file_id,
    );
    return reply
      .header("content-type", record.mimeType)
      .header("content-length", String(bytes.length))
      .header("content-disposition", attachmentDisposition(record.filename))
      .header("x-content-type-options", "nosniff")
      .header("cache-control", "private, no-store")
      .send(bytes);
  });

  app.delete<FileParams>("/v1/files/:file_id", async (request) => {
    await service().delete(principalOf(request).workspaceId, request.params.file_id);
    return { id: request.params.file_id, type: "file_deleted" };
  });
}
