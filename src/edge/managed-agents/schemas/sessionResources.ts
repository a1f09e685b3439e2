/**
 * Session resource request schemas (param types from `@anthropic-ai/sdk` resources/beta/sessions/
 * resources): `add` takes a file, `update` a repository's new token. The mount rules, lookups and
 * sealing are the service's (resources/sessionResources).
 */
import { z } from "zod";
import type { SessionResourceRequest } from "../../../resources/ports.js";
import { paginationQuery, requiredString } from "./common.js";
import type { CreateSessionBody } from "./sessions.js";

/** POST /v1/sessions/{id}/resources */
export const addSessionResourceBodySchema = z.strictObject({
  type: z.literal("file", { error: 'only "file" resources are added to a live session' }),
  file_id: requiredString,
  mount_path: z.string().min(1).nullish(),
});

/** POST /v1/sessions/{id}/resources/{resource_id} */
export const updateSessionResourceBodySchema = z.strictObject({
  authorization_token: requiredString,
});

/** GET /v1/sessions/{id}/resources (PageCursor). */
export const listSessionResourcesQuerySchema = z.strictObject({ ...paginationQuery });

type WireResource = NonNullable<CreateSessionBody["resources"]>[number];

/** A wire resource param as the service takes it (absent and null alike mean "the default"). */
export function toResourceRequest(r: WireResource): SessionResourceRequest {
  switch (r.type) {
    case "file":
      return { type: "file", fileId: r.file_id, mountPath: r.mount_path ?? null };
    case "memory_store":
      return {
        type: "memory_store",
        memoryStoreId: r.memory_store_id,
        access: r.access ?? null,
        instructions: r.instructions ?? null,
      };
    case "github_repository":
      return {
        type: "github_repository",
        url: r.url,
        authorizationToken: r.authorization_token ?? null,
        checkout: r.checkout ?? null,
        mountPath: r.mount_path ?? null,
      };
  }
}
