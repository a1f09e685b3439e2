import type { FastifyInstance } from "fastify";
import type { WebhookService } from "../../../coordinator/webhookService.js";
import { AwakenError, notFound } from "../../../kernel/errors.js";
import { actorOf, principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createWebhookBodySchema,
  listDeliveriesQuerySchema,
  listWebhooksQuerySchema,
  updateWebhookBodySchema,
} from "../schemas/webhooks.js";
import { newWebhookEndpointDto, webhookDeliveryDto, webhookEndpointDto } from "../webhookDto.js";

type EndpointParams = { Params: { webhook_endpoint_id: string } };
type DeliveryParams = { Params: { webhook_endpoint_id: string; delivery_id: string } };

/**
 * Webhook endpoints (SDK `beta.organization.webhooks`), scoped to the workspace of the admin key
 * that manages them, and the Awaken deliveries extension (`/v1/awaken/webhooks/…`): the deliveries
 * of an endpoint, dead-lettered ones included, and redelivery on request.
 */
export function webhookRoutes(app: FastifyInstance, deps: EdgeServices): void {
  const webhooks = (): WebhookService => {
    if (!deps.webhooks) throw new AwakenError("not_found", "This server does not send webhooks.");
    return deps.webhooks;
  };

  app.post("/v1/organizations/webhooks", async (request) => {
    const body = parseBody(createWebhookBodySchema, request.body);
    const { endpoint, secret } = await webhooks().create(actorOf(request), {
      url: body.url,
      enabledEvents: body.enabled_events,
      name: body.name ?? "",
      description: body.description ?? "",
    });
    return newWebhookEndpointDto(endpoint, secret);
  });

  app.get<EndpointParams>("/v1/organizations/webhooks/:webhook_endpoint_id", async (request) =>
    webhookEndpointDto(
      await webhooks().get(principalOf(request).workspaceId, request.params.webhook_endpoint_id),
    ),
  );

  app.post<EndpointParams>("/v1/organizations/webhooks/:webhook_endpoint_id", async (request) => {
    const body = parseBody(updateWebhookBodySchema, request.body ?? {});
    const endpoint = await webhooks().update(actorOf(request), request.params.webhook_endpoint_id, {
      url: body.url,
      enabledEvents: body.enabled_events,
      name: body.name,
      description: body.description,
      state: body.state,
    });
    return webhookEndpointDto(endpoint);
  });

  app.get<{ Querystring: RawQuery }>("/v1/organizations/webhooks", async (request) => {
    const q = parseQuery(listWebhooksQuerySchema, request.query);
    if (q.after_id !== undefined && q.before_id !== undefined) {
      throw new AwakenError("invalid_request", "Pass after_id or before_id, not both.");
    }
    const all = await webhooks().list(principalOf(request).workspaceId);
    if (q.order === "desc") all.reverse();
    const at = (id: string) => {
      const index = all.findIndex((e) => e.id === id);
      if (index < 0)
        throw new AwakenError("invalid_request", `${JSON.stringify(id)} is not an endpoint of this list.`);
      return index;
    };
    let start = 0;
    let end = all.length;
    if (q.after_id !== undefined) start = at(q.after_id) + 1;
    if (q.before_id !== undefined) {
      end = at(q.before_id);
      start = Math.max(0, end - q.limit);
    }
    const page = all.slice(start, Math.min(end, start + q.limit));
    const hasMore = q.before_id !== undefined ? start > 0 : start + page.length < end;
    return {
      data: page.map(webhookEndpointDto),
      has_more: hasMore,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
    };
  });

  app.delete<EndpointParams>("/v1/organizations/webhooks/:webhook_endpoint_id", async (request) => {
    await webhooks().delete(actorOf(request), request.params.webhook_endpoint_id);
    return { id: request.params.webhook_endpoint_id, type: "webhook_endpoint_deleted" };
  });

  app.post<EndpointParams>(
    "/v1/organizations/webhooks/:webhook_endpoint_id/regenerate_signing_secret",
    async (request) => ({
      signing_secret: await webhooks().regenerateSecret(actorOf(request), request.params.webhook_endpoint_id),
    }),
  );

  app.get<EndpointParams & { Querystring: RawQuery }>(
    "/v1/awaken/webhooks/:webhook_endpoint_id/deliveries",
    async (request) => {
      const q = parseQuery(listDeliveriesQuerySchema, request.query);
      const { workspaceId } = principalOf(request);
      const endpoint = await webhooks().get(workspaceId, request.params.webhook_endpoint_id);
      const rows = await webhooks().deliveries(workspaceId, endpoint.id, {
        state: q.state ?? null,
        limit: q.limit + 1,
        before: q.before_id ?? null,
      });
      const page = rows.slice(0, q.limit);
      return {
        data: page.map(webhookDeliveryDto),
        has_more: rows.length > q.limit,
        first_id: page[0]?.deliveryId ?? null,
        last_id: page.at(-1)?.deliveryId ?? null,
      };
    },
  );

  app.post<DeliveryParams>(
    "/v1/awaken/webhooks/:webhook_endpoint_id/deliveries/:delivery_id/redeliver",
    async (request) => {
      const { workspaceId } = principalOf(request);
      const { webhook_endpoint_id, delivery_id } = request.params;
      const endpoint = await webhooks().get(workspaceId, webhook_endpoint_id);
      const redelivered = await webhooks().redeliver(workspaceId, endpoint.id, delivery_id);
      if (!redelivered) throw notFound("webhook delivery", delivery_id);
      return webhookDeliveryDto(redelivered);
    },
  );
}
