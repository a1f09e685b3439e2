import { createHash, randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { RevocationNotices } from "../../control/ports.js";
import type { WakeSignals } from "../../coordinator/ports.js";
import { InProcessWakeSignals, type WakeSignal } from "../../coordinator/wakeSignals.js";
import { Backoff } from "../../kernel/backoff.js";
import { sleep } from "../../kernel/clock.js";
import type { Database } from "../sql/schema.js";
import type { CommitNotices } from "./commitNotices.js";
import { type DecodedNotice, decodeWakeNotice, encodeWakeNotice, type WakeNotice } from "./wakeNotices.js";

/** The two log levels this uses; a pino logger fits. */
export interface SignalLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface NotifyWakeSignalsOptions {
  /** The pool that publishes (`pg_notify` runs as one short autocommit statement per batch). */
  db: Kysely<Database>;
  /** For the dedicated LISTEN connection; it needs no search_path, channels are per database. */
  connectionString: string;
  /** Replicas share signals only when they share the schema (tests run many schemas in one database). */
  schema: string;
  log: SignalLog;
  /** Reconnect backoff after the LISTEN connection is lost (defaults 250 ms doubling to 5 s). */
  retryMinMs?: number;
  retryMaxMs?: number;
}

/** NOTIFY refuses a payload of 8000 bytes or more; ours are a few dozen (ids are short). */
const MAX_PAYLOAD_BYTES = 7_999;

/** PostgreSQL identifiers (channel names) are at most 63 bytes. */
export function channelFor(schema: string): string {
  const readable = `awaken_wake_${schema}`;
  if (Buffer.byteLength(readable) <= 63) return readable;
  return `awaken_wake_${createHash("sha256").update(schema).digest("hex").slice(0, 40)}`;
}

/** A batch nobody waits for (shared, never written). */
const NO_WAITERS: ReadonlyArray<() => void> = [];

/**
 * Wake signals shared by replicas through PostgreSQL LISTEN/NOTIFY. Local listeners hear a signal
 * at once (as in-process); other replicas hear it through `pg_notify`. Only latency depends on
 * this: streams and workers poll committed rows anyway, so a lost notification (connection down,
 * publish failed) delays, never loses, work. Hence publishing never throws into a commit.
 *
 * The hot commits (fenced commit, input append) carry their NOTIFY inside the committing statement
 * (`CommitNotices`): the signal the coordinator sends afterwards finds its payload carried and is
 * delivered locally only. A carried payload is remembered until the next turn of the event loop
 * (the coordinator signals right after the commit's promise resolves); a signal that comes later
 * is published again, a duplicate wake at worst.
 *
 * Key revocations travel on the same channel (`RevocationNotices`), so every replica's
 * authentication cache forgets a revoked key at once.
 */
export class NotifyWakeSignals implements WakeSignals, CommitNotices, RevocationNotices {
  private readonly local = new InProcessWakeSignals();
  private readonly revocationListeners = new Set<(keyId: string | null) => void>();
  /** Our own notifications come back to our LISTEN; this id drops them so nothing fires twice. */
  private readonly sender = randomBytes(8).toString("hex");
  readonly channel: string;
  /** Payloads committed statements notified during this turn of the event loop (see the class). */
  private carriedNow = new Set<string>();
  private forgetting: NodeJS.Immediate | null = null;
  /** Payloads waiting for the next publish statement, and the publishing in progress. */
  private queued: string[] = [];
  private publishing: Promise<void> | null = null;
  /** Who waits for the statement that will carry the payloads queued now (a revocation does). */
  private queuedWaiters: Array<() => void> = [];
  private readonly stop = new AbortController();
  private client: pg.Client | null = null;
  private pid: number | null = null;
  private listeningWaiters: Array<() => void> = [];
  private readonly loop: Promise<void>;

  constructor(private readonly options: NotifyWakeSignalsOptions) {
    this.channel = channelFor(options.schema);
    this.loop = this.listenLoop();
  }

  threadCommitted(threadId: string, version: number): void {
    this.local.threadCommitted(threadId, version);
    this.publish({ kind: "thread", thread: threadId, version });
  }

  onThreadCommitted(threadId: string, listener: (version: number) => void): () => void {
    return this.local.onThreadCommitted(threadId, listener);
  }

  onAnyThreadCommitted(listener: (threadId: string) => void): () => void {
    return this.local.onAnyThreadCommitted(listener);
  }

  dispatchReady(runId?: string): void {
    this.local.dispatchReady(runId);
    // The same payload its commit carried (`payloadOf`), so it is recognised as carried.
    this.publish(runId === undefined ? { kind: "dispatch" } : { kind: "dispatch", run: runId });
  }

  onDispatchReady(listener: (runId: string | null) => void): () => void {
    return this.local.onDispatchReady(listener);
  }

  runCancelled(runId: string): void {
    this.local.runCancelled(runId);
    this.publish({ kind: "cancel", run: runId });
  }

  onRunCancelled(listener: (runId: string) => void): () => void {
    return this.local.onRunCancelled(listener);
  }

  keyRevoked(keyId: string): Promise<void> {
    this.revoked(keyId);
    if (!this.publish({ kind: "revoked", key: keyId })) return Promise.resolve();
    // Resolves once the statement carrying it ran (a failure is logged there, never thrown), not
    // when every later batch a busy replica queues behind it has run too.
    return new Promise((resolve) => this.queuedWaiters.push(resolve));
  }

  onKeyRevoked(listener: (keyId: string | null) => void): () => void {
    this.revocationListeners.add(listener);
    return () => this.revocationListeners.delete(listener);
  }

  private revoked(keyId: string | null): void {
    for (const listener of this.revocationListeners) listener(keyId);
  }

  payloadOf(signal: WakeSignal): string | null {
    const payload = encodeWakeNotice(this.sender, signal);
    return Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES ? payload : null;
  }

  carried(payloads: readonly string[]): void {
    for (const payload of payloads) this.carriedNow.add(payload);
    this.forgetting ??= setImmediate(() => {
      this.forgetting = null;
      this.carriedNow = new Set();
    });
  }

  /** The backend pid of the LISTEN connection while it is up (operators and tests look for it). */
  get listenerPid(): number | null {
    return this.pid;
  }

  /** Resolves once the LISTEN connection is up (at once if it is). */
  whenListening(): Promise<void> {
    if (this.pid !== null) return Promise.resolve();
    return new Promise((resolve) => this.listeningWaiters.push(resolve));
  }

  /** Stops listening and waits for notifications still being published, before the pool closes. */
  async close(): Promise<void> {
    this.stop.abort();
    if (this.forgetting) clearImmediate(this.forgetting);
    this.forgetting = null;
    await this.client?.end().catch(() => {});
    await this.loop;
    for (const resolve of this.listeningWaiters.splice(0)) resolve();
    await this.publishing;
  }

  /**
   * Queues the signal and publishes it with every other signal queued meanwhile: one statement
   * (`pg_notify` for each payload of an array, in array order) on one pooled connection at a time.
   * Each publish used to be a statement of its own, on a connection of its own: a turn sends several
   * signals, so under load they cost about as many round trips as the turn's commits and held pooled
   * connections the stores were waiting for. Batched, they cost one round trip per batch and never
   * more than one connection. A signal waits for at most the statement in flight.
   */
  private publish(notice: WakeNotice): boolean {
    if (this.stop.signal.aborted) return false;
    const payload = encodeWakeNotice(this.sender, notice);
    // Its commit notified it already.
    if (this.carriedNow.has(payload)) return false;
    // NOTIFY drops a duplicate payload within one transaction anyway.
    if (!this.queued.includes(payload)) this.queued.push(payload);
    this.publishing ??= this.drain();
    return true;
  }

  /** Publishes queued payloads until none is left (also after close(), for those queued before). */
  private async drain(): Promise<void> {
    // Let the signals of the same tick (a commit's thread and dispatch signals) join the batch.
    await Promise.resolve();
    while (this.queued.length > 0) {
      const payloads = this.queued;
      this.queued = [];
      // Taken with its payloads (no allocation when, as on the hot path, nobody waits).
      const waiters = this.queuedWaiters.length > 0 ? this.queuedWaiters : NO_WAITERS;
      if (waiters !== NO_WAITERS) this.queuedWaiters = [];
      try {
        await sql`select pg_notify(${this.channel}, payload) from unnest(${payloads}::text[]) as payload`.execute(
          this.options.db,
        );
      } catch (error) {
        this.options.log.warn(
          { err: error, signals: payloads.length },
          "wake NOTIFY failed; replicas fall back to polling (a revocation, to their 30 s authentication cache)",
        );
      }
      for (const sent of waiters) sent();
    }
    this.publishing = null;
  }

  private deliver(raw: string | undefined): void {
    let parsed: DecodedNotice | null;
    try {
      parsed = decodeWakeNotice(raw ?? "");
    } catch (error) {
      this.options.log.warn({ err: error, payload: raw }, "ignored a malformed wake notification");
      return;
    }
    // A kind of a newer version (a rolling upgrade), or our own notification coming back.
    if (parsed === null || parsed.from === this.sender) return;
    switch (parsed.kind) {
      case "thread":
        this.local.threadCommitted(parsed.thread, parsed.version);
        break;
      case "dispatch":
        this.local.dispatchReady(parsed.run);
        break;
      case "cancel":
        this.local.runCancelled(parsed.run);
        break;
      case "revoked":
        this.revoked(parsed.key);
        break;
    }
  }

  /** Connect, LISTEN, wait for the connection to end, and again with backoff until closed. */
  private async listenLoop(): Promise<void> {
    const backoff = new Backoff({
      baseMs: this.options.retryMinMs ?? 250,
      maxMs: this.options.retryMaxMs ?? 5_000,
      jitter: "none",
    });
    let everListened = false;
    while (!this.stop.signal.aborted) {
      const client = new pg.Client({
        connectionString: this.options.connectionString,
        application_name: "awaken-wake-listener",
        keepAlive: true,
      });
      const ended = new Promise<unknown>((resolve) => {
        client.on("error", resolve);
        client.on("end", () => resolve(null));
      });
      this.client = client;
      try {
        await client.connect();
        await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
        const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
        this.pid = rows[0]?.pid ?? -1;
      } catch (error) {
        await client.end().catch(() => {});
        if (this.stop.signal.aborted) break;
        const delay = backoff.next() ?? 0;
        this.options.log.warn(
          { err: error, retryInMs: delay },
          "wake LISTEN connection failed; retrying (streams and workers keep polling)",
        );
        await sleep(delay, this.stop.signal);
        continue;
      }
      client.on("notification", (message) => this.deliver(message.payload));
      this.options.log.info(
        { channel: this.channel, pid: this.pid },
        everListened ? "wake LISTEN reconnected" : "wake LISTEN connected",
      );
      // Dispatches announced while we were deaf would otherwise wait for the next worker poll.
      if (everListened) this.local.dispatchReady();
      // Revocations likewise for the authentication cache's expiry (also when the first LISTEN
      // came up after this process started serving).
      this.revoked(null);
      everListened = true;
      backoff.reset();
      for (const resolve of this.listeningWaiters.splice(0)) resolve();

      const reason = await ended;
      this.pid = null;
      this.client = null;
      await client.end().catch(() => {});
      if (this.stop.signal.aborted) break;
      this.options.log.warn({ err: reason }, "wake LISTEN connection lost; reconnecting");
    }
    this.client = null;
    this.pid = null;
  }
}
