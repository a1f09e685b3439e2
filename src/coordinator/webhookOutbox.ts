/**
 * Webhook endpoints and the events they receive, as rows of the one outbox (pushOutbox.ts, format
 * `webhook`). An event is fanned out when it is enqueued: one row per enabled endpoint of its
 * workspace that lists its type, each row with its own stable delivery id (the `webhook-id` it is
 * signed and sent with on every attempt and redelivery). Session events follow committed facts
 * from a durable per-session cursor; other events are enqueued by the change that makes them.
 */

import type { Actor } from "../control/adminAudit.js";

/**
 * An event's type, as the SDK's webhook event union names it. The vocabulary is the edge's
 * (edge/webhooks/webhookEvents.ts); the outbox carries it as an opaque string.
 */
export type WebhookEventType = string;

/** At most this many endpoints per workspace (the SDK's limit for an organization). */
export const MAX_ENDPOINTS_PER_WORKSPACE = 32;

export type WebhookEndpointState = "enabled" | "disabled";

export interface WebhookEndpoint {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  url: string;
  enabledEvents: WebhookEventType[];
  state: WebhookEndpointState;
  disabledReason: string;
  /** The revision of the sealed secret (each regeneration is a new one). */
  secretRevision: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * One event to enqueue: its type, its workspace, the subject's id and any other field its SDK
 * type carries (`session_thread_id`, `vault_id`).
 */
export interface WebhookEventInput {
  workspaceId: string;
  type: WebhookEventType;
  id: string;
  extra?: Readonly<Record<string, string>>;
}

/**
 * The one call any context makes to emit a webhook event (deployments, vaults, …): it is fanned
 * out to the workspace's enabled endpoints that list its type and delivered at least once.
 */
export interface WebhookEvents {
  emit(event: WebhookEventInput): Promise<void>;
}

/** A queued event, as fanned out: its id and body (the same for every endpoint). */
export interface WebhookEventRow {
  eventId: string;
  type: WebhookEventType;
  body: string;
}

export type DeliveryState = "pending" | "delivered" | "abandoned";

/** One delivery of an event to an endpoint, as the deliveries API lists it (no secret, no body). */
export interface WebhookDeliveryView {
  deliveryId: string;
  eventId: string;
  eventType: string;
  state: DeliveryState;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: number;
  createdAt: number;
  settledAt: number | null;
}

/** A session whose committed facts webhook events follow. */
export interface WebhookSessionCursor {
  sessionId: string;
  workspaceId: string;
  threadId: string;
  cursorSeq: number;
  createdAt: number;
}

export interface WebhookStore {
  createEndpoint(by: Actor, endpoint: WebhookEndpoint, sealedSecret: string): Promise<boolean>;
  endpoint(workspaceId: string, id: string): Promise<WebhookEndpoint | null>;
  endpoints(workspaceId: string): Promise<WebhookEndpoint[]>;
  /** Writes `next` over the endpoint; disabling it abandons its undelivered rows. */
  updateEndpoint(by: Actor, before: WebhookEndpoint, next: WebhookEndpoint): Promise<boolean>;
  replaceSecret(
    by: Actor,
    before: WebhookEndpoint,
    next: WebhookEndpoint,
    sealedSecret: string,
  ): Promise<boolean>;
  /** Removes it and its undelivered rows; false when there was none. */
  deleteEndpoint(by: Actor, endpoint: WebhookEndpoint, now: number): Promise<boolean>;
  /** Fans `event` out to the endpoints that take it, as stream `stream` at `position`. */
  enqueue(
    workspaceId: string,
    event: WebhookEventRow,
    stream: { id: string; position: number },
    now: number,
  ): Promise<number>;
  /**
   * Sessions of workspaces with an endpoint, created since its first one, that no cursor follows
   * yet: each gets a cursor at the start of its history and its `session.created` event, in one
   * transaction. How many it found, and how many workspaces have an endpoint.
   */
  discoverSessions(
    now: number,
    limit: number,
    created: (s: WebhookSessionCursor) => WebhookEventRow,
  ): Promise<{ found: number; workspaces: number }>;
  followingSessions(limit: number, after: WebhookSessionCursor | null): Promise<WebhookSessionCursor[]>;
  /**
   * Appends the events of the facts after `from`'s cursor and moves it to `toSeq` in one
   * transaction, only if the cursor is still where `from` says: false otherwise.
   */
  advanceSession(
    from: WebhookSessionCursor,
    toSeq: number,
    finished: boolean,
    events: Array<WebhookEventRow & { position: number }>,
    now: number,
  ): Promise<boolean>;
  deliveries(
    workspaceId: string,
    endpointId: string,
    query: { state: DeliveryState | null; limit: number; before: string | null; id?: string },
  ): Promise<WebhookDeliveryView[]>;
  /** Puts a delivery back in line (same delivery id, attempts from zero); false when unknown. */
  redeliver(workspaceId: string, endpointId: string, deliveryId: string, now: number): Promise<boolean>;
}
