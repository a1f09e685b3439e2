/**
 * The one durable outbox of outbound deliveries, in two formats: A2A push notifications (`a2a`)
 * and signed webhook events (`webhook`, see webhookOutbox.ts). Both share the rows, the lease-held
 * claim, the settlement and the retry policy; a format only shapes its body and headers.
 *
 * Push notifications to a client's webhook: a subscription (one push config of one task) follows
 * the task's session from a durable cursor, and what it has to say waits in an outbox until a
 * deliverer, holding the row's lease, has POSTed it. Protocol-neutral: an edge decides which
 * committed facts make a notification and what its body is; the store keeps rows and cursor
 * consistent, and nothing in it is a second record of the task (the facts are).
 */

import { backoffDelayMs } from "../kernel/backoff.js";

export interface PushSubscription {
  workspaceId: string;
  taskId: string;
  configId: string;
  agentId: string;
  sessionId: string;
  threadId: string;
  url: string;
  /** Sent as the notification token header; "" for none. Never logged or answered. */
  token: string;
  /** `Authorization: <scheme> <credentials>` when both are set. Never logged or answered. */
  authScheme: string;
  authCredentials: string;
  /** The protocol version the config was set over, which shapes the body. */
  wireVersion: string;
  /** The last committed fact already turned into outbox rows. */
  cursorSeq: number;
  /** The task ended (or its range did): nothing more to follow. */
  finished: boolean;
  createdAt: number;
}

/** One notification to send: a body and its content type. */
export interface PushMessage {
  body: string;
  contentType: string;
}

/** Which shape a row goes out in: an A2A push notification, or a standard-webhooks signed event. */
export type OutboxFormat = "a2a" | "webhook";

/**
 * An outbox row. `position` orders one stream's rows (a push subscription's; a webhook
 * endpoint's events of one session); rows of one stream go out in that order.
 */
export interface PushDelivery extends PushMessage {
  workspaceId: string;
  /** A push subscription's task; a webhook row's stream (its session, or its event for a one-off). */
  taskId: string;
  /** A push config's id; a webhook row's endpoint id. */
  configId: string;
  position: number;
  /** Attempts so far, this one included once claimed. */
  attempts: number;
  format: OutboxFormat;
  /** A webhook row's stored stable id; null on A2A rows, whose id follows from their key. */
  storedId: string | null;
}

/** A claimed row and where it goes (the subscription's or endpoint's target as it is now). */
export interface ClaimedDelivery extends PushDelivery {
  url: string;
  /** A2A: the config's token. Webhook: the endpoint's signing secret (`whsec_…`). Sealed at rest. */
  token: string;
  authScheme: string;
  authCredentials: string;
  /** A webhook endpoint's secret revision (the sealed secret is bound to it); 1 for A2A. */
  secretRevision: number;
}

export type PushSettlement =
  | { kind: "delivered" }
  | { kind: "retry"; at: number; error: string }
  | { kind: "abandoned"; error: string };

export interface PushOutboxStore {
  /**
   * Creates the subscription with `first` as its first row, or, when one with that id exists,
   * points it at the new target (its cursor and rows stay).
   */
  subscribe(subscription: PushSubscription, first: PushMessage | null, now: number): Promise<void>;
  subscription(workspaceId: string, taskId: string, configId: string): Promise<PushSubscription | null>;
  subscriptions(workspaceId: string, taskId: string): Promise<PushSubscription[]>;
  /** Removes it and its undelivered rows; false when there was none. */
  unsubscribe(workspaceId: string, taskId: string, configId: string): Promise<boolean>;
  /** Subscriptions still following their task, oldest first, a page at a time (after `after`). */
  following(limit: number, after: PushSubscription | null): Promise<PushSubscription[]>;
  /**
   * Appends `rows` (positions after every existing one) and moves the cursor to `toSeq`, only if
   * the cursor is still `from.cursorSeq` (another process may have done it first): false then.
   */
  advance(
    from: PushSubscription,
    toSeq: number,
    finished: boolean,
    rows: Array<PushMessage & { position: number }>,
    now: number,
  ): Promise<boolean>;
  /**
   * Leases up to `limit` due rows to `owner` until `now + leaseMs`: each the earliest undelivered
   * row of its subscription, none leased to anyone else. `attempts` counts this one.
   */
  claim(owner: string, now: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  /**
   * The earliest moment a claim could lease a row (its retry time or the end of its lease, for
   * the earliest undelivered row of each subscription); null when no row is undelivered. A
   * deliverer with nothing to do sleeps until then instead of claiming into an empty outbox.
   */
  nextDueAt(): Promise<number | null>;
  /** Records an attempt's outcome, only while `owner` still holds the row's lease. */
  settle(delivery: PushDelivery, owner: string, outcome: PushSettlement, now: number): Promise<boolean>;
}

/** The store, with `woken` called after each subscription is set (its first row may be due). */
export function wakingOnSubscribe(store: PushOutboxStore, woken: () => void): PushOutboxStore {
  return {
    async subscribe(s, first, now) {
      await store.subscribe(s, first, now);
      woken();
    },
    subscription: (w, t, c) => store.subscription(w, t, c),
    subscriptions: (w, t) => store.subscriptions(w, t),
    unsubscribe: (w, t, c) => store.unsubscribe(w, t, c),
    following: (limit, after) => store.following(limit, after),
    advance: (from, toSeq, finished, rows, now) => store.advance(from, toSeq, finished, rows, now),
    claim: (owner, now, leaseMs, limit) => store.claim(owner, now, leaseMs, limit),
    nextDueAt: () => store.nextDueAt(),
    settle: (d, owner, outcome, now) => store.settle(d, owner, outcome, now),
  };
}

/** Room for the rows one committed fact can make. */
const ROWS_PER_FACT = 4;

/** The position of the `index`th row made from the fact at `seq`. */
export const factPosition = (seq: number, index: number): number => seq * ROWS_PER_FACT + index;

/** A config's first row: after every fact its cursor covers, before the rows of the facts after. */
export const firstPosition = (cursorSeq: number): number => factPosition(cursorSeq, ROWS_PER_FACT - 1);

/** A stable id per row, the same on every attempt and after a restart: receivers dedupe by it. */
export function deliveryId(d: Pick<PushDelivery, "taskId" | "configId" | "position" | "storedId">): string {
  return d.storedId ?? `${d.taskId}/${d.configId}/${d.position}`;
}

/** The kernel's backoff after `attempts` failed attempts, unjittered: the row stores the exact next time. */
export function pushBackoffMs(attempts: number, baseMs: number, maxMs: number): number {
  return backoffDelayMs({ baseMs, maxMs, jitter: "none" }, attempts);
}
