import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebhookEvents, WebhookEventType } from "../../coordinator/webhookOutbox.js";
import { principalOf } from "../http/auth.js";

/** A route whose success is a resource change, the event it makes and where the subject's id is. */
interface Emitting {
  type: WebhookEventType;
  /** The subject's id: a path parameter's name, or the answer's `id` when null. */
  param: string | null;
  /** Another field the event's SDK type carries, from a path parameter. */
  extra?: { field: string; param: string };
}

const VAULT = { field: "vault_id", param: "vault_id" };

/**
 * The changes of agents, environments, vaults, credentials, memory stores and sessions (those not
 * read from committed facts) that make a webhook event, by route. Keyed `METHOD path-template`.
 */
const EMITTING: Readonly<Record<string, Emitting>> = {
  "POST /v1/agents": { type: "agent.created", param: null },
  "POST /v1/agents/:id": { type: "agent.updated", param: "id" },
  "POST /v1/agents/:id/archive": { type: "agent.archived", param: "id" },
  "POST /v1/environments": { type: "environment.created", param: null },
  "POST /v1/environments/:id": { type: "environment.updated", param: "id" },
  "POST /v1/environments/:id/archive": { type: "environment.archived", param: "id" },
  "DELETE /v1/environments/:id": { type: "environment.deleted", param: "id" },
  "POST /v1/vaults": { type: "vault.created", param: null },
  "POST /v1/vaults/:vault_id/archive": { type: "vault.archived", param: "vault_id" },
  "DELETE /v1/vaults/:vault_id": { type: "vault.deleted", param: "vault_id" },
  "POST /v1/vaults/:vault_id/credentials": { type: "vault_credential.created", param: null, extra: VAULT },
  "POST /v1/vaults/:vault_id/credentials/:credential_id/archive": {
    type: "vault_credential.archived",
    param: "credential_id",
    extra: VAULT,
  },
  "DELETE /v1/vaults/:vault_id/credentials/:credential_id": {
    type: "vault_credential.deleted",
    param: "credential_id",
    extra: VAULT,
  },
  "POST /v1/memory_stores": { type: "memory_store.created", param: null },
  "POST /v1/memory_stores/:memory_store_id/archive": {
    type: "memory_store.archived",
    param: "memory_store_id",
  },
  "DELETE /v1/memory_stores/:memory_store_id": { type: "memory_store.deleted", param: "memory_store_id" },
  "POST /v1/sessions/:id/archive": { type: "session.archived", param: "id" },
};

/**
 * Emits the webhook event of each successful resource change before its answer is sent, so a
 * client that saw the answer can count on the event being queued. The change itself committed
 * first, in its own store: a process that dies between the two loses the event (the gap is
 * documented); an emission that fails is logged and never fails the change's answer.
 */
export function emitWebhookEvents(app: FastifyInstance, events: () => WebhookEvents | undefined): void {
  app.addHook("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode !== 200) return payload;
    const emitting = EMITTING[`${request.method} ${request.routeOptions.url ?? ""}`];
    const sink = events();
    if (!emitting || !sink) return payload;
    const params = (request.params ?? {}) as Record<string, string>;
    const id = emitting.param ? params[emitting.param] : idOf(payload);
    if (!id) return payload;
    const extra = emitting.extra ? { [emitting.extra.field]: params[emitting.extra.param] ?? "" } : undefined;
    try {
      await sink.emit({ workspaceId: principalOf(request).workspaceId, type: emitting.type, id, extra });
    } catch (error) {
      request.log.warn({ err: error, eventType: emitting.type }, "webhook event could not be queued");
    }
    return payload;
  });
}

function idOf(payload: unknown): string | null {
  if (typeof payload !== "string") return null;
  try {
    const parsed = JSON.parse(payload) as { id?: unknown };
    return typeof parsed.id === "string" ? parsed.id : null;
  } catch {
    return null;
  }
}
