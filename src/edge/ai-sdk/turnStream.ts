import type { FastifyReply, FastifyRequest } from "fastify";
import type { SessionRecord } from "../../coordinator/ports.js";
import { TailOverflowError } from "../../coordinator/sessionTail.js";
import { AwakenError } from "../../kernel/errors.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { typedTail } from "../http/typedFacts.js";
import type { TurnChunks } from "./turnChunks.js";
import { openUiMessageSse } from "./uiMessageSse.js";

export const SESSION_ID_HEADER = "x-awaken-session-id";

/**
 * Streams one assistant turn: the session's tail from `afterSeq` (committed facts and live
 * previews) through the formatter, until the turn ends. A closed connection only stops this
 * reading; the run goes on and commits. A failure after the headers went out is an `error` chunk.
 */
export async function streamTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  services: EdgeServices,
  session: SessionRecord,
  afterSeq: number,
  turn: TurnChunks,
): Promise<void> {
  const sse = openUiMessageSse(
    request,
    reply,
    { [SESSION_ID_HEADER]: session.id },
    services.stream.pingMs,
    services,
  );
  await sse.write(turn.start());
  try {
    for await (const item of typedTail(services.tail, session, afterSeq, sse.signal)) {
      await sse.write(turn.push(item));
      if (turn.done || sse.signal.aborted) break;
    }
    await sse.write(turn.finish());
  } catch (error) {
    if (!sse.signal.aborted) {
      request.log.warn({ err: error }, "AI SDK stream failed");
      await sse.write(turn.fail(failureText(error)));
    }
  }
  sse.end();
}

/** Deliberate errors carry a message meant for clients; anything else is not shown. */
function failureText(error: unknown): string {
  // A client too slow to keep up is cut off; the run goes on and `resumeStream` picks it up again.
  if (error instanceof TailOverflowError)
    return "The chat fell behind the live stream; resume it to catch up.";
  if (error instanceof AwakenError) return error.message;
  return "The stream failed on the server.";
}

/** A request that adds nothing while no run is going: an empty, finished assistant message. */
export async function answerNothingNew(
  request: FastifyRequest,
  reply: FastifyReply,
  services: EdgeServices,
  session: SessionRecord,
  turn: TurnChunks,
): Promise<void> {
  const sse = openUiMessageSse(
    request,
    reply,
    { [SESSION_ID_HEADER]: session.id },
    services.stream.pingMs,
    services,
  );
  await sse.write([...turn.start(), ...turn.finish()]);
  sse.end();
}
