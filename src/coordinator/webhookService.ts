import { randomBytes } from "node:crypto";
import type { Actor } from "../control/adminAudit.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { ScopedSealer } from "../secrets/ports.js";
import { encodeSealedText } from "../secrets/sealedText.js";
import { WEBHOOK_SECRET_FIELD, webhookSecretIdentity } from "./sealedPushStore.js";
import {
  type DeliveryState,
  MAX_ENDPOINTS_PER_WORKSPACE,
  type WebhookDeliveryView,
  type WebhookEndpoint,
  type WebhookEndpointState,
  type WebhookEventInput,
  type WebhookEvents,
  type WebhookEventType,
  type WebhookStore,
} from "./webhookOutbox.js";
import type { WebhookVocabulary } from "./webhookSessionFollower.js";

export interface WebhookServiceDeps {
  /** The edge's event vocabulary: an event's wire body. */
  vocabulary: Pick<WebhookVocabulary, "body">;
  store: WebhookStore;
  /** Control's sealer in the push scope: the signing secret is sealed like a push token. */
  sealer: ScopedSealer;
  /** Why a URL may not be a webhook target (the outbound address policy), or null. */
  refusal(url: string): Promise<string | null>;
  clock: Clock;
  /** A row may be due now: the deliverer looks sooner than its idle wait. */
  woken(): void;
}

export interface EndpointFields {
  url: string;
  enabledEvents: WebhookEventType[];
  name: string;
  description: string;
}

export interface EndpointPatch {
  url?: string | undefined;
  enabledEvents?: WebhookEventType[] | undefined;
  name?: string | undefined;
  description?: string | undefined;
  state?: WebhookEndpointState | undefined;
}

/** A `whsec_` secret: 32 random bytes, base64, as standard-webhooks keys are written. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * Webhook endpoints of a workspace (the SDK's organization endpoints, scoped to the workspace of
 * the admin key that manages them) and the one door through which events are enqueued.
 */
export class WebhookService implements WebhookEvents {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** The new endpoint and its signing secret: the only answer besides a regeneration that holds it. */
  async create(by: Actor, fields: EndpointFields): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.checkUrl(fields.url);
    const existing = await this.deps.store.endpoints(by.workspaceId);
    if (existing.length >= MAX_ENDPOINTS_PER_WORKSPACE) {
      throw invalid(`a workspace can have at most ${MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints`);
    }
    const now = this.deps.clock.now();
    const endpoint: WebhookEndpoint = {
      id: newId("whep", now),
      workspaceId: by.workspaceId,
      name: fields.name,
      description: fields.description,
      url: fields.url,
      enabledEvents: [...new Set(fields.enabledEvents)],
      state: "enabled",
      disabledReason: "",
      secretRevision: 1,
      createdAt: now,
      updatedAt: now,
    };
    const secret = newSigningSecret();
    await this.deps.store.createEndpoint(by, endpoint, await this.sealed(endpoint, secret));
    this.deps.woken();
    return { endpoint, secret };
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.deps.store.endpoint(workspaceId, id);
    if (!endpoint) throw notFound("webhook endpoint", id);
    return endpoint;
  }

  list(workspaceId: string): Promise<WebhookEndpoint[]> {
    return this.deps.store.endpoints(workspaceId);
  }

  async update(by: Actor, id: string, patch: EndpointPatch): Promise<WebhookEndpoint> {
    const before = await this.get(by.workspaceId, id);
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    const next: WebhookEndpoint = {
      ...before,
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      // An empty list leaves the set unchanged (SDK).
      ...(patch.enabledEvents && patch.enabledEvents.length > 0
        ? { enabledEvents: [...new Set(patch.enabledEvents)] }
        : {}),
      ...(patch.state !== undefined ? { state: patch.state, disabledReason: "" } : {}),
      updatedAt: Math.max(this.deps.clock.now(), before.updatedAt + 1),
    };
    if (!(await this.deps.store.updateEndpoint(by, before, next))) {
      throw new AwakenError("version_mismatch", "the webhook endpoint changed meanwhile; retry");
    }
    return next;
  }

  async regenerateSecret(by: Actor, id: string): Promise<string> {
    const before = await this.get(by.workspaceId, id);
    const next = {
      ...before,
      secretRevision: before.secretRevision + 1,
      updatedAt: Math.max(this.deps.clock.now(), before.updatedAt + 1),
    };
    const secret = newSigningSecret();
    if (!(await this.deps.store.replaceSecret(by, before, next, await this.sealed(next, secret)))) {
      throw new AwakenError("version_mismatch", "the webhook endpoint's secret changed meanwhile; retry");
    }
    return secret;
  }

  async delete(by: Actor, id: string): Promise<void> {
    const endpoint = await this.get(by.workspaceId, id);
    if (!(await this.deps.store.deleteEndpoint(by, endpoint, this.deps.clock.now()))) {
      throw notFound("webhook endpoint", id);
    }
  }

  deliveries(
    workspaceId: string,
    endpointId: string,
    query: { state: DeliveryState | null; limit: number; before: string | null },
  ): Promise<WebhookDeliveryView[]> {
    return this.deps.store.deliveries(workspaceId, endpointId, query);
  }

  /** Puts a delivery back in line with its delivery id; the delivery as it now stands, or null. */
  async redeliver(
    workspaceId: string,
    endpointId: string,
    deliveryId: string,
  ): Promise<WebhookDeliveryView | null> {
    if (deliveryId.length > 256) return null;
    if (!(await this.deps.store.redeliver(workspaceId, endpointId, deliveryId, this.deps.clock.now())))
      return null;
    this.deps.woken();
    const [view] = await this.deps.store.deliveries(workspaceId, endpointId, {
      state: null,
      limit: 1,
      before: null,
      id: deliveryId,
    });
    return view ?? null;
  }

  /**
   * Enqueues a one-off event (a resource's change): its own stream, so it waits behind nothing.
   * Called after the change committed: a process that dies between the two loses the event.
   */
  async emit(event: WebhookEventInput): Promise<void> {
    const now = this.deps.clock.now();
    const eventId = newId("wevt", now);
    const body = this.deps.vocabulary.body(event, eventId, now);
    const queued = await this.deps.store.enqueue(
      event.workspaceId,
      { eventId, type: event.type, body },
      { id: eventId, position: 0 },
      now,
    );
    if (queued > 0) this.deps.woken();
  }

  private async checkUrl(url: string): Promise<void> {
    const refusal = await this.deps.refusal(url);
    if (refusal) throw invalid(refusal.replaceAll("push notification url", "webhook url"));
  }

  private async sealed(endpoint: WebhookEndpoint, secret: string): Promise<string> {
    const identity = webhookSecretIdentity(endpoint.workspaceId, endpoint.id, endpoint.secretRevision);
    const { sealed } = await this.deps.sealer.seal(identity, { [WEBHOOK_SECRET_FIELD]: secret });
    return encodeSealedText(sealed);
  }
}
