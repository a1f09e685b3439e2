import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalid } from "../../../kernel/errors.js";
import { pathPrefixProblem } from "../../../resources/memory/memoryPaths.js";
import type { MemoryCaller } from "../../../resources/memory/memoryService.js";
import { principalOf } from "../../http/auth.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { toMs } from "../edgeDeps.js";
import { memoryDto, memoryListItemDto, memoryStoreDto, memoryVersionDto } from "../memoryDto.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createMemoryBodySchema,
  createMemoryStoreBodySchema,
  deleteMemoryQuerySchema,
  listMemoriesQuerySchema,
  listMemoryStoresQuerySchema,
  listMemoryVersionsQuerySchema,
  MEMORY_STORE_LIMITS,
  updateMemoryBodySchema,
  updateMemoryStoreBodySchema,
  viewQuerySchema,
} from "../schemas/memoryStores.js";

type StoreParams = { Params: { memory_store_id: string }; Querystring: RawQuery };
type MemoryParams = { Params: { memory_store_id: string; memory_id: string }; Querystring: RawQuery };
type VersionParams = {
  Params: { memory_store_id: string; memory_version_id: string };
  Querystring: RawQuery;
};

/** The workspace a request acts in, and the author its changes record (an API key by its id). */
function callerOf(request: FastifyRequest): MemoryCaller {
  const principal = principalOf(request);
  return {
    workspaceId: principal.workspaceId,
    author: principal.kind === "api_key" ? { type: "api_actor", apiKeyId: principal.apiKeyId } : null,
  };
}

/** With `view=full` a list page holds at most 20 items (SDK). */
const pageLimit = (limit: number, view: "basic" | "full") =>
  view === "full" ? Math.min(limit, MEMORY_STORE_LIMITS.fullViewPage) : limit;

/** Memory stores, memories and memory versions (SDK `beta.memoryStores`). */
export function memoryStoreRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const memory = () => deps.resources.memory;

  app.post("/v1/memory_stores", async (request) => {
    const body = parseBody(createMemoryStoreBodySchema, request.body);
    const store = await memory().createStore(callerOf(request), {
      name: body.name,
      description: body.description ?? "",
      metadata: body.metadata ?? {},
    });
    return memoryStoreDto(store);
  });

  app.get<StoreParams>("/v1/memory_stores/:memory_store_id", async (request) =>
    memoryStoreDto(await memory().getStore(principalOf(request).workspaceId, request.params.memory_store_id)),
  );

  app.post<StoreParams>("/v1/memory_stores/:memory_store_id", async (request) => {
    const body = parseBody(updateMemoryStoreBodySchema, request.body ?? {});
    const store = await memory().updateStore(callerOf(request), request.params.memory_store_id, body);
    return memoryStoreDto(store);
  });

  app.get<{ Querystring: RawQuery }>("/v1/memory_stores", async (request) => {
    const query = parseQuery(listMemoryStoresQuerySchema, request.query);
    const page = await memory().listStores(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
      createdAtGte: toMs(query.created_at?.gte) ?? null,
      createdAtLte: toMs(query.created_at?.lte) ?? null,
    });
    return pageDto(page, memoryStoreDto);
  });

  app.delete<StoreParams>("/v1/memory_stores/:memory_store_id", async (request) => {
    await memory().deleteStore(callerOf(request), request.params.memory_store_id);
    return { id: request.params.memory_store_id, type: "memory_store_deleted" };
  });

  app.post<StoreParams>("/v1/memory_stores/:memory_store_id/archive", async (request) =>
    memoryStoreDto(await memory().archiveStore(callerOf(request), request.params.memory_store_id)),
  );

  // Memories: create and update answer `basic` unless asked; retrieve answers `full` (SDK).
  app.post<StoreParams>("/v1/memory_stores/:memory_store_id/memories", async (request) => {
    const { view = "basic" } = parseQuery(viewQuerySchema, request.query);
    const body = parseBody(createMemoryBodySchema, request.body);
    const created = await memory().createMemory(callerOf(request), request.params.memory_store_id, {
      path: body.path,
      content: body.content ?? "",
    });
    return memoryDto(created, view);
  });

  app.get<MemoryParams>("/v1/memory_stores/:memory_store_id/memories/:memory_id", async (request) => {
    const { view = "full" } = parseQuery(viewQuerySchema, request.query);
    const { memory_store_id, memory_id } = request.params;
    return memoryDto(
      await memory().getMemory(principalOf(request).workspaceId, memory_store_id, memory_id),
      view,
    );
  });

  app.post<MemoryParams>("/v1/memory_stores/:memory_store_id/memories/:memory_id", async (request) => {
    const { view = "basic" } = parseQuery(viewQuerySchema, request.query);
    const body = parseBody(updateMemoryBodySchema, request.body ?? {});
    const { memory_store_id, memory_id } = request.params;
    const updated = await memory().updateMemory(callerOf(request), memory_store_id, memory_id, {
      path: body.path ?? null,
      content: body.content ?? null,
      expectedContentSha256: body.precondition?.content_sha256 ?? null,
    });
    return memoryDto(updated, view);
  });

  app.get<StoreParams>("/v1/memory_stores/:memory_store_id/memories", async (request) => {
    const query = parseQuery(listMemoriesQuerySchema, request.query);
    const pathPrefix = query.path_prefix ?? "/";
    const problem = pathPrefixProblem(pathPrefix);
    if (problem) throw invalid(`path_prefix ${problem}`);
    const page = await memory().listMemories(
      principalOf(request).workspaceId,
      request.params.memory_store_id,
      {
        limit: pageLimit(query.limit, query.view),
        cursor: query.page ?? null,
        pathPrefix,
        depth: query.depth,
      },
    );
    return pageDto(page, (item) => memoryListItemDto(item, query.view));
  });

  app.delete<MemoryParams>("/v1/memory_stores/:memory_store_id/memories/:memory_id", async (request) => {
    const query = parseQuery(deleteMemoryQuerySchema, request.query);
    const { memory_store_id, memory_id } = request.params;
    await memory().deleteMemory(
      callerOf(request),
      memory_store_id,
      memory_id,
      query.expected_content_sha256 ?? null,
    );
    return { id: memory_id, type: "memory_deleted" };
  });

  // Memory versions: retrieve answers `full` unless asked, list `basic`.
  app.get<StoreParams>("/v1/memory_stores/:memory_store_id/memory_versions", async (request) => {
    const query = parseQuery(listMemoryVersionsQuerySchema, request.query);
    const page = await memory().listVersions(
      principalOf(request).workspaceId,
      request.params.memory_store_id,
      {
        limit: pageLimit(query.limit, query.view),
        cursor: query.page ?? null,
        memoryId: query.memory_id ?? null,
        operation: query.operation ?? null,
        sessionId: query.session_id ?? null,
        apiKeyId: query.api_key_id ?? null,
        serviceAccountId: query.service_account_id ?? null,
        createdAtGte: toMs(query.created_at?.gte) ?? null,
        createdAtLte: toMs(query.created_at?.lte) ?? null,
      },
    );
    return pageDto(page, (version) => memoryVersionDto(version, query.view));
  });

  app.get<VersionParams>(
    "/v1/memory_stores/:memory_store_id/memory_versions/:memory_version_id",
    async (request) => {
      const { view = "full" } = parseQuery(viewQuerySchema, request.query);
      const { memory_store_id, memory_version_id } = request.params;
      const version = await memory().getVersion(
        principalOf(request).workspaceId,
        memory_store_id,
        memory_version_id,
      );
      return memoryVersionDto(version, view);
    },
  );

  app.post<VersionParams>(
    "/v1/memory_stores/:memory_store_id/memory_versions/:memory_version_id/redact",
    async (request) => {
      const { memory_store_id, memory_version_id } = request.params;
      const version = await memory().redactVersion(callerOf(request), memory_store_id, memory_version_id);
      return memoryVersionDto(version, "full");
    },
  );
}
