import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { WebhookEventInput } from "../../coordinator/webhookOutbox.js";
import type { SessionWebhookEvent } from "../../coordinator/webhookSessionFollower.js";

/**
 * The webhook event vocabulary of the Managed wire: every event type the SDK's
 * `BetaWebhookEventData` union names (what an endpoint may list), and the session events the
 * committed facts make. The outbox and its deliverer treat types as opaque strings.
 */

/** Every event type the SDK's `BetaWebhookEventData` union names: what an endpoint may list. */
export const WEBHOOK_EVENT_TYPES = [
  "session.created",
  "session.pending",
  "session.running",
  "session.idled",
  "session.requires_action",
  "session.archived",
  "session.deleted",
  "session.updated",
  "session.budget_reached",
  "session.status_rescheduled",
  "session.status_run_started",
  "session.status_idled",
  "session.status_terminated",
  "session.thread_created",
  "session.thread_idled",
  "session.thread_terminated",
  "session.outcome_evaluation_ended",
  "vault.created",
  "vault.archived",
  "vault.deleted",
  "vault_credential.created",
  "vault_credential.archived",
  "vault_credential.deleted",
  "vault_credential.refresh_failed",
  "agent.created",
  "agent.updated",
  "agent.archived",
  "agent.deleted",
  "deployment.created",
  "deployment.updated",
  "deployment.paused",
  "deployment.unpaused",
  "deployment.archived",
  "deployment.deleted",
  "deployment_run.started",
  "deployment_run.succeeded",
  "deployment_run.failed",
  "environment.created",
  "environment.updated",
  "environment.archived",
  "environment.deleted",
  "memory_store.created",
  "memory_store.archived",
  "memory_store.deleted",
  "user_profile.enforcement_action_opened",
  "user_profile.enforcement_action_resolved",
  "user_profile.program_status_updated",
  "external_key.failed",
  "external_key.recovered",
  "external_storage.failed",
  "external_storage.recovered",
] as const;
export type WireWebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (value: string): value is WireWebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

/** The event a session's first sight makes. */
export const SESSION_CREATED: WireWebhookEventType = "session.created";
/** A session event one committed fact makes: its type and the fields its SDK type adds. */

/**
 * The session events a committed fact of a session's primary thread makes (child threads' changes
 * are committed there too). A pure function of the fact, so following from a cursor yields the
 * same events after a restart. At most three per fact (the outbox leaves room for four).
 */
export function sessionEventsOf(fact: CommittedTypedFact): SessionWebhookEvent[] {
  switch (fact.kind) {
    case "status_running":
      return [{ type: "session.status_run_started" }, { type: "session.running" }];
    case "status_rescheduled":
      return [{ type: "session.status_rescheduled" }, { type: "session.pending" }];
    case "status_terminated":
      return [{ type: "session.status_terminated" }];
    case "status_idle": {
      const events: SessionWebhookEvent[] = [{ type: "session.status_idled" }];
      // Waiting on a client's answer (a permission, a custom tool's result) is "requires action".
      events.push({ type: fact.reason.kind === "waiting" ? "session.requires_action" : "session.idled" });
      if (fact.reason.kind === "budget_reached") events.push({ type: "session.budget_reached" });
      return events;
    }
    case "thread_created":
      return [{ type: "session.thread_created", extra: { session_thread_id: fact.thread } }];
    case "thread_status":
      if (fact.transition.to === "idle") {
        return [{ type: "session.thread_idled", extra: { session_thread_id: fact.thread } }];
      }
      if (fact.transition.to === "terminated") {
        return [{ type: "session.thread_terminated", extra: { session_thread_id: fact.thread } }];
      }
      return [];
    case "outcome_evaluation_end":
      return [{ type: "session.outcome_evaluation_ended" }];
    case "session_updated":
      return [{ type: "session.updated" }];
    case "session_deleted":
      return [{ type: "session.deleted" }];
    default:
      return [];
  }
}

/**
 * The `organization_id` every event carries: a self-hosted installation is one organization, and
 * its workspaces are the SDK's workspaces (each event also names its `workspace_id`).
 */
export const INSTALLATION_ORGANIZATION_ID = "org_self_hosted";

/** The wire body of an event (the SDK's `BetaWebhookEvent`). */
export function webhookEventBody(event: WebhookEventInput, eventId: string, at: number): string {
  return JSON.stringify({
    id: eventId,
    type: "event",
    created_at: new Date(at).toISOString(),
    data: {
      ...event.extra,
      id: event.id,
      organization_id: INSTALLATION_ORGANIZATION_ID,
      type: event.type,
      workspace_id: event.workspaceId,
    },
  });
}
