import type { FastifyReply, FastifyRequest } from "fastify";
import { decodeCommitted } from "../../coordinator/factCodec.js";
import { type CommittedFact, isInternalFact } from "../../coordinator/facts.js";
import type {
  HistoryReader,
  LiveEvidence,
  LiveEvidenceBus,
  SessionRecord,
  WakeSignals,
} from "../../coordinator/ports.js";
import { eventDto } from "./dto.js";

export interface StreamDeps {
  history: HistoryReader;
  signals: WakeSignals;
  evidence: LiveEvidenceBus;
  pingMs: number;
  /** Safety net when a wake signal is missed; committed rows are the source either way. */
  pollMs: number;
}

const CLOSING_TYPES = new Set(["session.deleted", "session.status_terminated"]);
const PAGE = 500;

/**
 * Live tail of a session (wire §1.6): only facts committed after the connection opened, read from
 * the store (never from a private buffer), plus the delta previews the client asked for. Every
 * write goes through one promise chain so previews and committed facts keep their order.
 */
export function streamSession(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: StreamDeps,
  session: SessionRecord,
  deltaTypes: ReadonlySet<string>,
): void {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "request-id": request.id,
  });
  raw.flushHeaders();

  let closed = false;
  let cursor: number | null = null;
  let chain: Promise<void> = Promise.resolve();
  const previews = new Set<string>();
  const cleanups: Array<() => void> = [];

  const write = (event: string, data: unknown) => {
    if (!closed) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const close = () => {
    if (closed) return;
    closed = true;
    for (const cleanup of cleanups) cleanup();
    raw.end();
  };
  const enqueue = (task: () => Promise<void> | void) => {
    chain = chain.then(task).catch((error) => {
      request.log.warn({ err: error }, "session stream failed");
      close();
    });
  };
  // `upTo` is the version a commit signal announced: reading no further keeps facts committed
  // later (during this async read) behind the previews that were published before them.
  const pump = (upTo?: number) =>
    enqueue(async () => {
      if (closed || cursor === null) return;
      const limit = upTo === undefined ? PAGE : Math.min(PAGE, upTo - cursor);
      if (limit <= 0) return;
      const facts: CommittedFact[] = await deps.history.readThread(session.threadId, cursor, limit);
      for (const fact of facts) {
        cursor = fact.seq;
        previews.delete(fact.id);
        if (isInternalFact(fact.type)) continue;
        write(fact.type, eventDto(decodeCommitted(fact)));
        if (CLOSING_TYPES.has(fact.type)) {
          close();
          return;
        }
      }
      if (facts.length === limit && (upTo === undefined || cursor < upTo)) pump(upTo);
    });
  const onEvidence = (evidence: LiveEvidence) =>
    enqueue(() => {
      if (evidence.kind === "event_start") {
        if (!deltaTypes.has(evidence.eventType)) return;
        previews.add(evidence.eventId);
        write("event_start", {
          type: "event_start",
          event: { id: evidence.eventId, type: evidence.eventType },
        });
      } else if (evidence.kind === "event_delta") {
        if (!previews.has(evidence.eventId)) return;
        write("event_delta", {
          type: "event_delta",
          event_id: evidence.eventId,
          delta: {
            type: "content_delta",
            content: { type: "text", text: evidence.text },
            index: evidence.index,
          },
        });
      } else {
        previews.delete(evidence.eventId);
      }
    });

  // Subscribe before reading the start position so nothing committed in between is missed.
  cleanups.push(deps.signals.onThreadCommitted(session.threadId, pump));
  if (deltaTypes.size > 0) cleanups.push(deps.evidence.subscribe(session.id, onEvidence));
  const poll = setInterval(() => pump(), deps.pollMs);
  const ping = setInterval(() => enqueue(() => write("ping", { type: "ping" })), deps.pingMs);
  cleanups.push(
    () => clearInterval(poll),
    () => clearInterval(ping),
  );
  raw.on("close", close);
  enqueue(async () => {
    cursor = await deps.history.threadVersion(session.threadId);
  });
}
