import type { CommittedTypedFact } from "./factVocabulary.js";
import type { WebhookEventType } from "./webhookOutbox.js";

/** A session event one committed fact makes: its type and the fields its SDK type adds. */
export interface SessionWebhookEvent {
  type: WebhookEventType;
  extra?: Record<string, string>;
}

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
