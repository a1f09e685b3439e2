import type { Clock } from "../kernel/clock.js";
import { newId } from "../kernel/ids.js";
import type { CommittedTypedFact } from "./factVocabulary.js";
import { factPosition } from "./pushOutbox.js";
import type {
  WebhookEventInput,
  WebhookEventType,
  WebhookSessionCursor,
  WebhookStore,
} from "./webhookOutbox.js";

/** A session event one committed fact makes: its type and the fields its wire type adds. */
export interface SessionWebhookEvent {
  type: WebhookEventType;
  extra?: Record<string, string>;
}

/**
 * The edge's vocabulary: which events a session's first sight and each committed fact make, and
 * an event's wire body.
 */
export interface WebhookVocabulary {
  created: WebhookEventType;
  of(fact: CommittedTypedFact): SessionWebhookEvent[];
  body(event: WebhookEventInput, eventId: string, at: number): string;
}

/** A thread's committed facts after a seq, decoded. */
export type TypedHistory = (threadId: string, afterSeq: number) => Promise<CommittedTypedFact[]>;

/**
 * Turns sessions' committed facts into webhook deliveries, a round at a time (the outbox's
 * deliverer runs it beside the push configs' following): new sessions get a cursor and their
 * `session.created`; each followed session's facts after its cursor become events, appended with
 * the cursor's move in one transaction, so each fact's events are queued once.
 */
export class WebhookSessionFollower {
  /** As of the last round: some workspace has an endpoint, so any thread's commit may be news. */
  private endpointsExist = false;

  constructor(
    private readonly deps: {
      store: WebhookStore;
      vocabulary: WebhookVocabulary;
      history: TypedHistory;
      clock: Clock;
    },
  ) {}

  /** True when a commit on a thread no cursor follows yet (a new session's) should wake a round. */
  get wantsEveryCommit(): boolean {
    return this.endpointsExist;
  }

  /**
   * One round of following sessions: new sessions get a cursor and their `session.created`; each
   * followed session's facts after its cursor become events. How many cursors moved.
   */
  async follow(onThread: (threadId: string) => void): Promise<number> {
    const now = this.deps.clock.now();
    const discovered = await this.deps.store.discoverSessions(now, 100, (s) => {
      const eventId = newId("wevt", now);
      const event = { workspaceId: s.workspaceId, type: this.deps.vocabulary.created, id: s.sessionId };
      return { eventId, type: event.type, body: this.deps.vocabulary.body(event, eventId, s.createdAt) };
    });
    this.endpointsExist = discovered.workspaces > 0;
    let moved = discovered.found;
    let after: WebhookSessionCursor | null = null;
    for (;;) {
      const page = await this.deps.store.followingSessions(100, after);
      for (const cursor of page) {
        onThread(cursor.threadId);
        if (await this.followOne(cursor)) moved += 1;
      }
      if (page.length < 100) return moved;
      after = page.at(-1) ?? null;
    }
  }

  private async followOne(cursor: WebhookSessionCursor): Promise<boolean> {
    const facts = await this.deps.history(cursor.threadId, cursor.cursorSeq);
    if (facts.length === 0) return false;
    const events = [];
    let finished = false;
    for (const fact of facts) {
      let index = 0;
      for (const made of this.deps.vocabulary.of(fact)) {
        const eventId = newId("wevt", fact.createdAt);
        const input = {
          workspaceId: cursor.workspaceId,
          type: made.type,
          id: cursor.sessionId,
          extra: made.extra,
        };
        events.push({
          eventId,
          type: made.type,
          body: this.deps.vocabulary.body(input, eventId, fact.createdAt),
          position: factPosition(fact.seq, index),
        });
        index += 1;
      }
      if (fact.kind === "session_deleted") finished = true;
    }
    const toSeq = facts.at(-1)?.seq ?? cursor.cursorSeq;
    return this.deps.store.advanceSession(cursor, toSeq, finished, events, this.deps.clock.now());
  }
}
