import type { FastifyInstance } from "fastify";
import { AwakenError } from "../../../kernel/errors.js";
import type { ModelListing } from "../../../providers/modelCatalogPort.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { modelDto } from "../modelDto.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listModelsQuerySchema } from "../schemas/models.js";

type ModelParams = { Params: { model_id: string } };

/**
 * `models.list` / `models.retrieve` of the SDK: what the configured providers serve, each with the
 * provider a turn naming it goes to (`provider`, `answered_offline`), so a client sees before a
 * turn which ids would be answered by the built-in offline model.
 */
export function modelRoutes(app: FastifyInstance, deps: EdgeServices): void {
  app.get<{ Querystring: RawQuery }>("/v1/models", async (request) => {
    const q = parseQuery(listModelsQuerySchema, request.query);
    if (q.after_id !== undefined && q.before_id !== undefined) {
      throw new AwakenError("invalid_request", "Pass after_id or before_id, not both.");
    }
    return modelPage(await deps.models.list(), q);
  });

  app.get<ModelParams>("/v1/models/:model_id", async (request) => {
    const id = request.params.model_id;
    const model = id.length <= 256 ? await deps.models.retrieve(id) : null;
    if (!model) {
      throw new AwakenError(
        "not_found",
        `No configured provider serves model ${JSON.stringify(id.slice(0, 256))}; GET /v1/models lists the ones that do.`,
      );
    }
    return modelDto(model);
  });
}

/** One page of the list, in its order (newest first per provider), by the ids at its edges. */
function modelPage(
  all: ModelListing[],
  q: { limit: number; after_id?: string | undefined; before_id?: string | undefined },
) {
  let start = 0;
  let end = all.length;
  const at = (id: string) => {
    const index = all.findIndex((m) => m.id === id);
    if (index < 0)
      throw new AwakenError("invalid_request", `${JSON.stringify(id)} is not a model of this list.`);
    return index;
  };
  if (q.after_id !== undefined) start = at(q.after_id) + 1;
  if (q.before_id !== undefined) {
    end = at(q.before_id);
    start = Math.max(0, end - q.limit);
  }
  const page = all.slice(start, Math.min(end, start + q.limit));
  const hasMore = q.before_id !== undefined ? start > 0 : start + page.length < all.length;
  return {
    data: page.map(modelDto),
    has_more: hasMore,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
  };
}
