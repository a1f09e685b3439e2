import type { WebhookDeliveryView, WebhookEndpoint } from "../../coordinator/webhookOutbox.js";

const iso = (ms: number) => new Date(ms).toISOString();

/** `BetaOrganizationWebhookEndpoint`: never the signing secret. */
export function webhookEndpointDto(e: WebhookEndpoint) {
  return {
    id: e.id,
    type: "webhook_endpoint",
    created_at: iso(e.createdAt),
    description: e.description,
    disabled_reason: e.disabledReason,
    enabled_events: e.enabledEvents,
    name: e.name,
    state: e.state,
    updated_at: iso(e.updatedAt),
    url: e.url,
    workspace_id: e.workspaceId,
  };
}

/** `BetaNewOrganizationWebhookEndpoint`: the endpoint and, this once, its signing secret. */
export function newWebhookEndpointDto(e: WebhookEndpoint, secret: string) {
  return { ...webhookEndpointDto(e), signing_secret: secret };
}

/** One delivery of the Awaken deliveries extension; `abandoned` is the dead-letter state. */
export function webhookDeliveryDto(d: WebhookDeliveryView) {
  return {
    id: d.deliveryId,
    type: "webhook_delivery",
    event_id: d.eventId,
    event_type: d.eventType,
    state: d.state,
    attempts: d.attempts,
    last_error: d.lastError,
    next_attempt_at: d.state === "pending" ? iso(d.nextAttemptAt) : null,
    created_at: iso(d.createdAt),
    settled_at: d.settledAt === null ? null : iso(d.settledAt),
  };
}
