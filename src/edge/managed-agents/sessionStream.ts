import type { FastifyReply, FastifyRequest } from "fastify";
import { decodeCommitted } from "../../coordinator/factCodec.js";
import { isInternalFact } from "../../coordinator/facts.js";
import type { LiveEvidence, SessionRecord } from "../../coordinator/ports.js";
import { type SessionTail, type TailItem, TailOverflowError } from "../../coordinator/sessionTail.js";
import { onReplyClosed } from "../http/closeListener.js";
import { type CredentialDeps, credentialLifetime } from "../http/credentialLifetime.js";
import { SseWriter } from "../http/sseWriter.js";
import { eventDto } from "./dto.js";

/**
 * What the Managed wire stream needs: the session tail to format, the ping interval, and the
 * services that re-authenticate its credential (the stream ends when that credential does).
 */
export interface SessionStreamDeps {
  tail: SessionTail;
  pingMs: number;
  auth: CredentialDeps;
}

const PING_FRAME = sseFrame("ping", { type: "ping" });

/** The Managed event a preview kind is shown as; tool-input previews have none on this wire. */
const PREVIEW_EVENT_TYPES = { text: "agent.message", thinking: "agent.thinking" } as const;

/**
 * The reason a stream's tail is stopped with: one shared value, since a bare `abort()` builds a
 * DOMException with a stack trace for every stream that closes, and nothing reads the reason.
 */
const STREAM_CLOSED = new Error("the event stream closed");

/**
 * Live tail of a session on the Managed wire (§1.6): the session tail's facts committed after the
 * connection opened, minus internal ones, plus the delta previews the client asked for. "Opened" is
 * when the client gets the response headers (the SDK returns the stream then, and a client sends
 * its input next), so they go out only once the tail has fixed its start position: sent earlier, a
 * send could commit before the tail's start read and its facts would never be streamed. A client
 * that stops reading stops the tail's reads too (the shared `SseWriter` waits for the socket to drain).
 */
export function streamSession(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: SessionStreamDeps,
  session: SessionRecord,
  deltaTypes: ReadonlySet<string>,
  /** The thread's version read with the session: the stream starts there (no read of its own). */
  fromVersion?: number,
): void {
  reply.hijack();
  const raw = reply.raw;
  const gone = new AbortController();
  onReplyClosed(reply, "session stream", () => gone.abort(STREAM_CLOSED));
  credentialLifetime(deps.auth, request, gone.signal).addEventListener("abort", () =>
    gone.abort(STREAM_CLOSED),
  );
  let writer: SseWriter | undefined;
  const formatter = new ManagedFrames(deltaTypes);
  let onPositioned!: () => void;
  const positioned = new Promise<void>((resolve) => {
    onPositioned = resolve;
  });
  const tail = deps.tail.open(session, {
    previews: deltaTypes.size > 0,
    signal: gone.signal,
    onPositioned,
    ...(fromVersion !== undefined ? { fromVersion } : {}),
  });

  void (async () => {
    try {
      await positioned;
      raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        "x-accel-buffering": "no",
        "request-id": request.id,
      });
      raw.flushHeaders();
      writer = new SseWriter(reply, {
        hook: "session stream",
        heartbeat: { frame: PING_FRAME, everyMs: deps.pingMs },
        clock: deps.auth.clock,
        signal: gone.signal,
      });
      for await (const item of tail) {
        const frame = formatter.frame(item);
        if (frame) await writer.write(sseFrame(frame.event, frame.data));
      }
    } catch (error) {
      if (error instanceof TailOverflowError) request.log.info({ sessionId: session.id }, error.message);
      else if (!gone.signal.aborted) request.log.warn({ err: error }, "session stream failed");
    } finally {
      gone.abort(STREAM_CLOSED);
      if (writer) writer.end();
      else raw.end();
    }
  })();
}

function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Tail items as Managed stream frames (SSE here, objects in process); remembers which previews it showed. */
export class ManagedFrames {
  private readonly shown = new Set<string>();

  constructor(private readonly deltaTypes: ReadonlySet<string>) {}

  frame(item: TailItem): { event: string; data: unknown } | null {
    if (item.kind === "preview") return this.preview(item.evidence);
    const { fact } = item;
    this.shown.delete(fact.id);
    if (isInternalFact(fact.type)) return null;
    return { event: fact.type, data: eventDto(decodeCommitted(fact)) };
  }

  private preview(evidence: LiveEvidence): { event: string; data: unknown } | null {
    if (evidence.kind === "preview_start") {
      const type = evidence.preview === "tool_input" ? undefined : PREVIEW_EVENT_TYPES[evidence.preview];
      if (type === undefined || !this.deltaTypes.has(type)) return null;
      this.shown.add(evidence.eventId);
      return { event: "event_start", data: { type: "event_start", event: { id: evidence.eventId, type } } };
    }
    if (evidence.kind === "preview_delta") {
      if (!this.shown.has(evidence.eventId)) return null;
      return {
        event: "event_delta",
        data: {
          type: "event_delta",
          event_id: evidence.eventId,
          delta: {
            type: "content_delta",
            content: { type: "text", text: evidence.text },
            index: evidence.index,
          },
        },
      };
    }
    this.shown.delete(evidence.eventId);
    return null;
  }
}
