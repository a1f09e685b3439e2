import type { CommitOperation, CommitResult } from "../coordinator/commitOperation.js";
import type { CommittedFact } from "../coordinator/facts.js";
import type {
  Activation,
  CredentialOpenRequest,
  LiveEvidence,
  SecretOpenRequest,
  SecretVariablesRequest,
} from "../coordinator/ports.js";
import { Backoff } from "../kernel/backoff.js";
import { sleep } from "../kernel/clock.js";
import { PlatformError } from "../kernel/errors.js";
import { traceHeaders } from "../kernel/traceContext.js";
import type { Tracing } from "../kernel/tracing.js";
import type { RuntimeLog } from "../runtime/ports.js";
import { HttpPoster, type PostAnswer } from "./httpPost.js";
import type { WorkerTransport } from "./ports.js";
import {
  MAX_CLAIM_WAIT_MS,
  MAX_EVIDENCE_ITEMS,
  responseSchema,
  WORKER_ROUTE_PREFIX,
  WORKER_ROUTES,
  type WorkerRequest,
  type WorkerResponse,
  type WorkerRouteName,
} from "./transportWire.js";

export interface HttpTransportOptions {
  /** The coordinator's base URL, e.g. `http://10.0.0.5:4600`. */
  baseUrl: string;
  token: string;
  log: RuntimeLog;
  /** How long a claim may wait on the coordinator for new work (long-poll). */
  claimWaitMs?: number;
  /** Attempts of an idempotent call on connection errors, with doubling backoff from `retryBaseMs`. */
  attempts?: number;
  retryBaseMs?: number;
  /** Calls made inside a span (a run slice's commits and reads) carry its `traceparent`. */
  tracing?: Tracing;
}

/** A call the coordinator answered with an error status: retrying the same request will not help. */
export class CoordinatorRejected extends PlatformError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super("coordinator_rejected", message);
    this.name = "CoordinatorRejected";
  }
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);

type EvidenceItem = WorkerRequest<"evidence">["items"][number];

/** The routes a run's `RunResources` calls go through (resourceWire.ts). */
export type ResourceRouteName =
  | "resolveResources"
  | "readBlob"
  | "memorySnapshot"
  | "writeMemory"
  | "repositoryToken";
type ClaimCheckedRouteName =
  | "openCredential"
  | "secretVariables"
  | "openSecret"
  | "tunnelFetch"
  | "packageResolution"
  | ResourceRouteName;

/**
 * `WorkerTransport` over HTTP for a worker with no database. Calls that are safe to repeat are
 * retried on connection errors: renew/release/read are idempotent, and a commit carries its
 * operation id, so a retry after a lost response gets the original receipt from the fence. A claim
 * is not retried: a lost claim response leaves a run held until its lease lapses, and the worker
 * loop claims again anyway. Wake-ups come from the claim's long-poll, cancellation from renew
 * answering `held: false` (and from a credential open answered `claim_lost`).
 *
 * Live evidence (previews) is batched: what is published in one turn of the event loop leaves in
 * one request, one batch at a time so batches arrive in order. A commit waits only for a batch in
 * flight that carries its own session's previews, and takes that session's pending ones along
 * (the coordinator publishes them before it applies the commit): previews still precede the facts
 * that end them, and a model that answers at once (or faster than a round trip) costs no evidence
 * request at all.
 */
export class HttpWorkerTransport implements WorkerTransport {
  private readonly base: string;
  private readonly claimWaitMs: number;
  /** Per slot (owner), the wake cursor of its last answered claim (see the claim route). */
  private readonly wakeCursors = new Map<string, string>();
  private readonly attempts: number;
  private readonly retryBaseMs: number;
  private unreachable = false;
  private readonly cancelListeners = new Set<(runId: string) => void>();
  private evidenceQueue: EvidenceItem[] = [];
  /** The evidence batch in flight, and the sessions it carries previews of. */
  private batch: { sent: Promise<void>; sessions: Set<string> } | null = null;
  private batchScheduled = false;
  private readonly poster: HttpPoster;

  constructor(private readonly options: HttpTransportOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.poster = new HttpPoster(this.base);
    this.claimWaitMs = Math.min(options.claimWaitMs ?? 1_000, MAX_CLAIM_WAIT_MS);
    this.attempts = options.attempts ?? 6;
    this.retryBaseMs = options.retryBaseMs ?? 100;
  }

  /** Closes the kept-alive connections to the coordinator (the worker has stopped). */
  close(): void {
    this.poster.close();
  }

  /** The coordinator's worker settings; also proves the URL and the token before any claim. */
  config(): Promise<WorkerResponse<"config">> {
    return this.call("config", {}, true);
  }

  async claim(owner: string, _leaseMs: number, idle = false): Promise<Activation | null> {
    const idleSince = idle ? this.wakeCursors.get(owner) : undefined;
    const { activation, wakeCursor } = await this.call(
      "claim",
      { owner, waitMs: this.claimWaitMs, ...(idleSince !== undefined ? { idleSince } : {}) },
      false,
    );
    this.wakeCursors.set(owner, wakeCursor);
    return activation;
  }

  async renew(runId: string, owner: string, epoch: number, _leaseMs: number): Promise<boolean> {
    return (await this.call("renew", { runId, owner, epoch }, true)).held;
  }

  async release(runId: string, owner: string, epoch: number): Promise<void> {
    await this.call("release", { runId, owner, epoch }, true);
  }

  async commit(op: CommitOperation, sessionId?: string): Promise<CommitResult> {
    // Previews of a message must reach streams before the fact that makes them history.
    if (sessionId === undefined) {
      await this.flushEvidence();
      return this.call("commit", { op }, true);
    }
    while (this.batch?.sessions.has(sessionId)) await this.batch.sent;
    const evidence = this.takeEvidence(sessionId);
    // A retry repeats the same body; the coordinator publishes a commit's previews only once.
    return this.call("commit", evidence.length > 0 ? { op, evidence } : { op }, true);
  }

  async readThread(threadId: string, afterSeq: number): Promise<CommittedFact[]> {
    return (await this.call("readThread", { threadId, afterSeq }, true)).facts;
  }

  publish(sessionId: string, evidence: LiveEvidence): void {
    this.evidenceQueue.push({ sessionId, evidence });
    this.scheduleBatch();
  }

  onWork(_listener: (runId: string | null) => void): () => void {
    return () => {};
  }

  onRunCancelled(listener: (runId: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  /**
   * Asks the coordinator to open the session's pinned credential for a last-mile holder of this
   * worker (`remoteCredentials.ts` is the runtime's port over it). The coordinator checks the claim
   * first; an answer of `claim_lost` aborts that run here at once (the cancel listeners, as a failed
   * renew would a moment later), so the runtime sees a lost claim, not an error. Retried like the
   * other idempotent calls: an open repeated after a lost response is a second, audited open of the
   * same pin, never another credential.
   */
  openCredential(request: CredentialOpenRequest): Promise<WorkerResponse<"openCredential">> {
    return this.claimChecked("openCredential", request);
  }

  /**
   * The session's pinned `environment_variable` credentials (secret-free) the sandbox is set up
   * from, and one of their secrets for the sandbox's egress proxy: the same claim-checked calls
   * as `openCredential` (a `claim_lost` answer aborts the run here), retried the same way (a
   * repeated open is a second audited open of the same pin).
   */
  secretVariables(request: SecretVariablesRequest): Promise<WorkerResponse<"secretVariables">> {
    return this.claimChecked("secretVariables", request);
  }

  openSecret(request: SecretOpenRequest): Promise<WorkerResponse<"openSecret">> {
    return this.claimChecked("openSecret", request);
  }

  /**
   * A run's `RunResources` call (`remoteResources.ts` is the runtime's port over it), claim-checked
   * like the credential calls. Retried on connection errors except a memory write-back: a write
   * whose answer was lost may have been applied, and a repeat would be judged against what it wrote
   * (at most once: the run reports the failure instead).
   */
  resourceCall<R extends ResourceRouteName>(name: R, request: WorkerRequest<R>): Promise<WorkerResponse<R>> {
    return this.claimChecked(name, request, name !== "writeMemory");
  }

  /**
   * Reads (`resolution: null`) or records an environment revision's frozen package resolution,
   * claim-checked. Repeating a record is safe: the first writer's stays, and is the answer.
   */
  packageResolution(
    request: WorkerRequest<"packageResolution">,
  ): Promise<WorkerResponse<"packageResolution">> {
    return this.claimChecked("packageResolution", request);
  }

  /** A run's MCP request through a tunnel: never repeated (a tool call may not be idempotent). */
  tunnelCall(request: WorkerRequest<"tunnelFetch">): Promise<WorkerResponse<"tunnelFetch">> {
    return this.claimChecked("tunnelFetch", request, false);
  }

  /** A call naming a claim the coordinator checks first: `claim_lost` aborts that run at once. */
  private async claimChecked<R extends ClaimCheckedRouteName>(
    name: R,
    request: WorkerRequest<R> & { runId: string },
    idempotent = true,
  ): Promise<WorkerResponse<R>> {
    const answer = await this.call(name, request, idempotent);
    if (answer.kind === "claim_lost") for (const listener of this.cancelListeners) listener(request.runId);
    return answer;
  }

  /**
   * The next batch leaves on the next turn of the event loop, never while one is in flight: deltas
   * that arrive meanwhile travel together, and a commit made in the same turn (a model that
   * answered at once) takes its session's along instead.
   */
  private scheduleBatch(): void {
    if (this.batchScheduled || this.batch || this.evidenceQueue.length === 0) return;
    this.batchScheduled = true;
    setImmediate(() => {
      this.batchScheduled = false;
      this.sendBatch();
    });
  }

  private sendBatch(): void {
    if (this.batch || this.evidenceQueue.length === 0) return;
    const items = this.evidenceQueue.splice(0, MAX_EVIDENCE_ITEMS);
    const sent = this.call("evidence", { items }, false)
      .then(
        () => {},
        // Evidence is never authority: a lost batch only thins a preview, so it is not retried.
        (error: unknown) => this.options.log.warn({ error: String(error) }, "live evidence batch dropped"),
      )
      .finally(() => {
        this.batch = null;
        this.scheduleBatch();
      });
    this.batch = { sent, sessions: new Set(items.map((item) => item.sessionId)) };
  }

  /** Sends every pending preview, for a commit whose session is unknown. */
  private async flushEvidence(): Promise<void> {
    while (this.batch || this.evidenceQueue.length > 0) {
      if (this.batch) await this.batch.sent;
      else this.sendBatch();
    }
  }

  /** Removes one session's pending previews from the queue (the others keep their order). */
  private takeEvidence(sessionId: string): EvidenceItem[] {
    const taken: EvidenceItem[] = [];
    const kept: EvidenceItem[] = [];
    for (const item of this.evidenceQueue) (item.sessionId === sessionId ? taken : kept).push(item);
    if (taken.length === 0) return taken;
    this.evidenceQueue = kept;
    if (taken.length > MAX_EVIDENCE_ITEMS) {
      this.options.log.warn(
        { sessionId, dropped: taken.length - MAX_EVIDENCE_ITEMS },
        "live evidence past the per-request limit dropped",
      );
    }
    return taken.slice(0, MAX_EVIDENCE_ITEMS);
  }

  private async call<R extends WorkerRouteName>(
    name: R,
    body: WorkerRequest<R>,
    idempotent: boolean,
  ): Promise<WorkerResponse<R>> {
    const path = `${WORKER_ROUTE_PREFIX}${WORKER_ROUTES[name].path}`;
    // Bodies are built by this class's typed methods; the coordinator validates every one it gets.
    const payload = JSON.stringify(body);
    const timeoutMs = name === "claim" ? this.claimWaitMs + 15_000 : 30_000;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.token}`,
      "content-type": "application/json",
    };
    const trace = this.options.tracing?.activeContext();
    if (trace) Object.assign(headers, traceHeaders(trace));
    const backoff = new Backoff({
      baseMs: this.retryBaseMs,
      maxMs: Number.POSITIVE_INFINITY,
      jitter: "none",
      maxAttempts: idempotent ? this.attempts : 1,
    });
    for (;;) {
      let response: PostAnswer;
      try {
        response = await this.poster.post(path, headers, payload, timeoutMs);
      } catch (error) {
        this.noteUnreachable(error);
        const wait = backoff.next();
        if (wait === null) throw error;
        await sleep(wait);
        continue;
      }
      this.noteReachable();
      if (response.status >= 200 && response.status < 300)
        return responseSchema(name).parse(JSON.parse(response.text));
      const message = errorMessage(response.text);
      const wait = RETRYABLE_STATUS.has(response.status) ? backoff.next() : null;
      if (wait !== null) {
        await sleep(wait);
        continue;
      }
      throw new CoordinatorRejected(
        response.status,
        `coordinator answered ${response.status} to ${name}: ${message}`,
      );
    }
  }

  /** One line per outage, not one per call: a down coordinator must not flood the log. */
  private noteUnreachable(error: unknown): void {
    if (this.unreachable) return;
    this.unreachable = true;
    this.options.log.warn(
      { coordinator: this.base, error: errorText(error) },
      "coordinator unreachable; retrying (runs resume from their last commit once it is back)",
    );
  }

  private noteReachable(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    this.options.log.info({ coordinator: this.base }, "coordinator reachable again");
  }
}

function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === "string") return body.error.message;
  } catch {
    // not the error envelope: show the raw text
  }
  return text.slice(0, 300);
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
