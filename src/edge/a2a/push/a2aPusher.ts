import { createHash, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { CommittedTypedFact } from "../../../coordinator/factVocabulary.js";
import {
  type ClaimedDelivery,
  deliveryId,
  factPosition,
  type PushOutboxStore,
  type PushSettlement,
  type PushSubscription,
  pushBackoffMs,
} from "../../../coordinator/pushOutbox.js";
import type { Clock } from "../../../kernel/clock.js";
import type { PushDeliveryOutcome } from "../../../kernel/metrics.js";
import { type Outbound, outboundRefusalOf } from "../../../kernel/outboundConnector.js";
import type { PushPacing } from "./pushPacing.js";
import { pushMessageOf } from "./pushPayloads.js";
import { notificationsAfter } from "./taskNotifications.js";

/** The header the SDK's own sender carries a config's token in. */
export const NOTIFICATION_TOKEN_HEADER = "X-A2A-Notification-Token";
/** The same on every attempt of a row, and after a restart: receivers dedupe by it. */
export const DELIVERY_ID_HEADER = "X-Awaken-Delivery-Id";

/**
 * The standard-webhooks key an A2A push is signed with: derived from the config's token, so the
 * receiver that chose the token verifies with `whsec_` + base64(SHA-256(label, token)) and nothing
 * else has to be exchanged. A config without a token is not signed.
 */
export function a2aPushSigningKey(token: string): string {
  return `whsec_${createHash("sha256").update("awaken a2a push signing key\u0000").update(token).digest("base64")}`;
}

const FOLLOW_BATCH = 100;
const CLAIM_BATCH = 16;

export interface A2aPusherDeps {
  store: PushOutboxStore;
  /** Connections on a user's behalf: every address checked again at connect time. */
  outbound: Outbound;
  history(threadId: string, afterSeq: number): Promise<CommittedTypedFact[]>;
  clock: Clock;
  pacing: PushPacing;
  /** Never handed a token, a credential or a full URL. */
  log: { warn(fields: object, message: string): void; debug(fields: object, message: string): void };
  counted(outcome: PushDeliveryOutcome): void;
  /** Every thread's commits, this replica's and the others': a followed task's move wakes a round. */
  onAnyThreadCommitted?: (listener: (threadId: string) => void) => () => void;
  /**
   * Webhook events' followers (sessions' committed facts into webhook rows), run each round beside
   * the push configs': how many moved; each followed thread is reported so its commits wake a round.
   */
  webhooks?: {
    follow(onThread: (threadId: string) => void): Promise<number>;
    readonly wantsEveryCommit: boolean;
  };
}

/**
 * The server process's push deliverer. Each round it first turns facts committed since each
 * config's cursor into outbox rows (rows and cursor in one transaction, so a fact is never
 * skipped and, by the rows' positions, never queued twice), then POSTs the due rows it could
 * lease. A process killed at any point leaves rows that another round (here or on a replica,
 * after a restart) delivers: at least once, each with a stable delivery id.
 *
 * Rounds follow the work: a round that moved something is followed by another after `pollMs`; an
 * idle one learns when the next row falls due and sleeps until then (at most `idlePollMs`), so an
 * idle outbox costs no claim. A commit on a followed task, or a config set here, wakes a round.
 */
export class A2aPusher {
  /** This process's incarnation: a restarted process never mistakes its predecessor's lease. */
  readonly owner = `push.${randomUUID()}`;
  private timer: NodeJS.Timeout | null = null;
  /** When the armed timer fires (process time), so a wake only ever brings it sooner. */
  private timerAt = Number.POSITIVE_INFINITY;
  private round: Promise<void> | null = null;
  private inRound = false;
  private wokenInRound = false;
  private stopped = false;
  private unsubscribe: (() => void) | null = null;
  /** The threads of the subscriptions still following, as of the last round. */
  private followed = new Set<string>();
  /** When the next row falls due, from the last idle round: null for none, undefined for unknown. */
  private dueAt: number | null | undefined;

  constructor(private readonly deps: A2aPusherDeps) {}

  start(): void {
    this.unsubscribe =
      this.deps.onAnyThreadCommitted?.((threadId) => {
        if (this.followed.has(threadId) || this.deps.webhooks?.wantsEveryCommit) this.wake();
      }) ?? null;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await this.round;
  }

  /**
   * Something may be due that the last idle round did not see (a config set here, a followed task
   * moved): a round within `pollMs` instead of after the idle wait.
   */
  wake(): void {
    if (this.stopped) return;
    this.dueAt = undefined;
    if (this.inRound) this.wokenInRound = true;
    else this.schedule(this.deps.pacing.pollMs);
  }

  /**
   * One round: follow, then deliver unless the last idle round saw nothing due yet. True when it
   * moved something. Exposed for tests that drive rounds themselves.
   */
  async runOnce(): Promise<boolean> {
    const moved = await this.follow();
    const due = this.dueAt === undefined || (this.dueAt !== null && this.dueAt <= this.deps.clock.now());
    const claimed = moved > 0 || due ? await this.deliver() : 0;
    if (moved > 0 || claimed > 0) {
      this.dueAt = undefined;
      return true;
    }
    this.dueAt = await this.deps.store.nextDueAt();
    return false;
  }

  /** Arms the timer for a round in `ms`, unless one is already armed sooner. */
  private schedule(ms: number): void {
    if (this.stopped) return;
    const at = performance.now() + ms;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.startRound();
    }, ms);
    this.timer.unref?.();
  }

  private startRound(): void {
    this.inRound = true;
    this.wokenInRound = false;
    const { pollMs } = this.deps.pacing;
    this.round = this.runOnce()
      .then(
        (moved) => (moved || this.wokenInRound ? pollMs : this.idleWaitMs()),
        (error: unknown) => {
          this.dueAt = undefined;
          this.deps.log.warn({ err: error }, "push round failed; next round retries");
          return pollMs;
        },
      )
      .then((ms) => {
        this.inRound = false;
        this.schedule(ms);
      });
  }

  /** Until the next row falls due, within [pollMs, idlePollMs]: the idle bound covers what no signal announces. */
  private idleWaitMs(): number {
    const { pollMs, idlePollMs } = this.deps.pacing;
    if (this.dueAt === null || this.dueAt === undefined) return idlePollMs;
    return Math.min(idlePollMs, Math.max(pollMs, this.dueAt - this.deps.clock.now()));
  }

  /**
   * Every config still following its task, a page at a time, so none waits behind the others.
   * Returns how many moved their cursor.
   */
  private async follow(): Promise<number> {
    let after: PushSubscription | null = null;
    let moved = 0;
    const followed = new Set<string>();
    try {
      for (;;) {
        const page = await this.deps.store.following(FOLLOW_BATCH, after);
        for (const subscription of page) {
          if (this.stopped) return moved;
          followed.add(subscription.threadId);
          try {
            if (await this.followOne(subscription)) moved += 1;
          } catch (error) {
            this.deps.log.warn(
              { err: error, taskId: subscription.taskId },
              "push config could not follow its task",
            );
          }
        }
        if (page.length < FOLLOW_BATCH) break;
        after = page.at(-1) ?? null;
      }
      if (this.deps.webhooks && !this.stopped) {
        try {
          moved += await this.deps.webhooks.follow((threadId) => followed.add(threadId));
        } catch (error) {
          this.deps.log.warn({ err: error }, "webhook events could not follow their sessions");
        }
      }
      return moved;
    } finally {
      this.followed = followed;
    }
  }

  /** True when the subscription's cursor moved (its rows may be due now). */
  private async followOne(s: PushSubscription): Promise<boolean> {
    const newer = await this.deps.history(s.threadId, s.cursorSeq);
    if (newer.length === 0) return false;
    const facts = await this.deps.history(s.threadId, 0);
    const { notifications, toSeq, finished } = notificationsAfter(s.sessionId, s.taskId, facts, s.cursorSeq);
    const perFact = new Map<number, number>();
    const rows = notifications.map((n) => {
      const index = perFact.get(n.seq) ?? 0;
      perFact.set(n.seq, index + 1);
      return { ...pushMessageOf(n.event, s.wireVersion), position: factPosition(n.seq, index) };
    });
    return this.deps.store.advance(s, toSeq, finished, rows, this.deps.clock.now());
  }

  /** Leases the due rows and POSTs them; how many it leased. */
  private async deliver(): Promise<number> {
    const { pacing } = this.deps;
    const leaseMs = pacing.requestTimeoutMs * 2;
    const claimed = await this.deps.store.claim(this.owner, this.deps.clock.now(), leaseMs, CLAIM_BATCH);
    await Promise.all(claimed.map((d) => this.deliverOne(d)));
    return claimed.length;
  }

  private async deliverOne(d: ClaimedDelivery): Promise<void> {
    const { pacing, clock } = this.deps;
    let outcome: PushSettlement;
    let counted: PushDeliveryOutcome;
    const error = await this.post(d);
    if (error === null) {
      outcome = { kind: "delivered" };
      counted = "delivered";
    } else if (error.refused || d.attempts >= pacing.maxAttempts) {
      outcome = { kind: "abandoned", error: error.message };
      counted = error.refused ? "refused" : "abandoned";
      this.deps.log.warn(
        { deliveryId: deliveryId(d), attempts: d.attempts, host: hostOf(d.url), error: error.message },
        "push notification abandoned",
      );
    } else {
      const at = clock.now() + pushBackoffMs(d.attempts, pacing.retryBaseMs, pacing.retryMaxMs);
      outcome = { kind: "retry", at, error: error.message };
      counted = "retried";
      this.deps.log.debug(
        { deliveryId: deliveryId(d), attempts: d.attempts, host: hostOf(d.url), error: error.message },
        "push notification failed; retried later",
      );
    }
    // A lease lost meanwhile (a very slow receiver) leaves the row to its new holder.
    if (await this.deps.store.settle(d, this.owner, outcome, clock.now())) this.deps.counted(counted);
  }

  private headersOf(d: ClaimedDelivery): Record<string, string> | null {
    return signedHeaders(d, this.deps.clock.now());
  }

  /** One POST; the failure, safe to store and log (a status or an error kind, never a secret), or null. */
  private async post(d: ClaimedDelivery): Promise<{ message: string; refused: boolean } | null> {
    const headers = this.headersOf(d);
    if (!headers) return { message: "the signing secret could not be opened", refused: false };
    try {
      const response = await this.deps.outbound.fetch(d.url, {
        method: "POST",
        headers,
        body: d.body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.deps.pacing.requestTimeoutMs),
      });
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return null;
      return { message: `HTTP ${response.status}`, refused: false };
    } catch (error) {
      const refusal = outboundRefusalOf(error);
      if (refusal) return { message: "the address policy refused the webhook's address", refused: true };
      const name = error instanceof Error ? error.name : "Error";
      return { message: name === "TimeoutError" ? "timed out" : "connection failed", refused: false };
    }
  }
}

/**
 * The one place formats differ: headers. Both are signed with standard webhooks (`webhook-id` is
 * the row's stable delivery id, `webhook-timestamp` this attempt's time); an A2A push also carries
 * the A2A token and authentication headers its spec requires. Null: a webhook whose secret did not open.
 */
function signedHeaders(d: ClaimedDelivery, now: number): Record<string, string> | null {
  const id = deliveryId(d);
  const headers: Record<string, string> = { "content-type": d.contentType };
  let key = "";
  if (d.format === "webhook") {
    if (d.token === "") return null;
    key = d.token;
  } else {
    headers[DELIVERY_ID_HEADER] = id;
    if (d.token !== "") {
      headers[NOTIFICATION_TOKEN_HEADER] = d.token;
      key = a2aPushSigningKey(d.token);
    }
    if (d.authScheme !== "" && d.authCredentials !== "") {
      headers.authorization = `${d.authScheme} ${d.authCredentials}`;
    }
  }
  if (key !== "") {
    const at = new Date(now);
    headers["webhook-id"] = id;
    headers["webhook-timestamp"] = String(Math.floor(now / 1000));
    headers["webhook-signature"] = new Webhook(key).sign(id, at, d.body);
  }
  return headers;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}
