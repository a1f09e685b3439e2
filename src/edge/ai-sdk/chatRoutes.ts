import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import { AwakenError } from "../../kernel/errors.js";
import { principalOf } from "../http/auth.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { servicesFor } from "../http/scopedServices.js";
import { assistantMessageIdFor } from "./assistantMessageId.js";
import { type ChatInputs, chatInputs } from "./chatInputs.js";
import { CHAT_LIMITS, type ChatRequest, parseChatRequest } from "./chatRequest.js";
import { assertOpen, findChatSession, openChatSession } from "./chatSession.js";
import { latestTurn } from "./historyMessages.js";
import { committedView, readHistory, runIsActive } from "./sessionHistory.js";
import { TurnChunks } from "./turnChunks.js";
import { answerNothingNew, streamTurn } from "./turnStream.js";

/** How long a repeated send (the same message id, the same answers) gets the first one's echo. */
const CHAT_RETRY_WINDOW_MS = 10 * 60_000;

/**
 * `POST /v1/ai-sdk/chat`, what `DefaultChatTransport` posts, and `GET /v1/ai-sdk/chat/:chatId/stream`,
 * what its `reconnectToStream` (the chat's `resumeStream`) asks for.
 */
export function chatRoutes(app: FastifyInstance, shared: EdgeServices): void {
  app.post("/v1/ai-sdk/chat", async (request, reply) => {
    const services = servicesFor(shared, request);
    const body = parseChatRequest(request.body);
    const workspaceId = principalOf(request).workspaceId;
    const existing = await findChatSession(services, workspaceId, body);
    if (!existing) {
      // Mapped before the session exists, so a request that would be refused creates nothing.
      const mapped = chatInputs(body, { clientMessageIds: new Set(), pending: [] });
      if (!mapped.opensTurn) {
        throw new AwakenError(
          "invalid_request",
          "A new chat must start with a user message as its last message.",
        );
      }
      const session = await openChatSession(services, workspaceId, body);
      return send(request, reply, services, session, [], body, mapped);
    }
    assertOpen(existing);
    const facts = await readHistory(services, existing);
    const mapped = chatInputs(body, await committedView(services, facts, existing));
    if (mapped.inputs.length > 0) return send(request, reply, services, existing, facts, body, mapped);
    // Nothing new (a re-sent list): the turn still going is replayed, else the turn is over.
    if (runIsActive(facts)) return replayActiveTurn(request, reply, services, existing, facts);
    const turn = latestTurn(facts, existing.id);
    await answerNothingNew(
      request,
      reply,
      services,
      existing,
      new TurnChunks({ messageId: turn.assistantMessageId }),
    );
  });

  app.get<{ Params: { chatId: string } }>("/v1/ai-sdk/chat/:chatId/stream", async (request, reply) => {
    const services = servicesFor(shared, request);
    const { chatId } = request.params;
    if (chatId.length > CHAT_LIMITS.idLength) {
      throw new AwakenError("invalid_request", `A chat id is at most ${CHAT_LIMITS.idLength} characters.`);
    }
    const workspaceId = principalOf(request).workspaceId;
    const session = await services.entry.findNamed(workspaceId, chatId);
    const facts = session ? await readHistory(services, session) : [];
    if (!session || !runIsActive(facts)) return reply.code(204).send();
    replayActiveTurn(request, reply, services, session, facts);
  });
}

/**
 * The running turn from its user message on, then live. The client rebuilds the message from the
 * replay's `start` (a full replay, its default); idles already in `facts` were pauses of the turn.
 */
function replayActiveTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  services: EdgeServices,
  session: SessionRecord,
  facts: readonly CommittedTypedFact[],
): void {
  const turn = latestTurn(facts, session.id);
  const replayThroughSeq = facts.at(-1)?.seq ?? 0;
  const chunks = new TurnChunks({ messageId: turn.assistantMessageId, replayThroughSeq });
  stream(request, reply, services, session, turn.seq, chunks);
}

async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  services: EdgeServices,
  session: SessionRecord,
  facts: readonly CommittedTypedFact[],
  body: ChatRequest,
  mapped: ChatInputs,
): Promise<void> {
  const committed = await services.sessions.send(session.workspaceId, session.id, mapped.inputs, {
    dedupe: { key: mapped.dedupeKey ?? "", strict: false, windowMs: CHAT_RETRY_WINDOW_MS },
  });
  const echo = committed.map(decodeCommitted);
  const opener = echo.find((fact) => fact.kind === "user_message");
  const messageId = opener
    ? assistantMessageIdFor(opener.id)
    : latestTurn(facts, session.id).assistantMessageId;
  const last = body.messages.at(-1);
  const knownCallIds =
    last?.role === "assistant"
      ? last.parts.flatMap((part) => (typeof part.toolCallId === "string" ? [part.toolCallId] : []))
      : [];
  // The tail starts just before this send's first fact: the stream shows what the send caused. An
  // answer routed to a subagent echoes on the subagent's thread: the session's stream then goes on
  // from the history read before the send.
  const own = echo.filter((fact) => fact.threadId === session.threadId);
  const afterSeq = own.length > 0 ? Math.min(...own.map((fact) => fact.seq)) - 1 : (facts.at(-1)?.seq ?? 0);
  const turn = new TurnChunks({ messageId, knownCallIds, clientAnswered: mapped.clientAnswered });
  stream(request, reply, services, session, afterSeq, turn);
}

/** The response outlives the handler; whatever escapes the stream is logged, never unhandled. */
function stream(
  request: FastifyRequest,
  reply: FastifyReply,
  services: EdgeServices,
  session: SessionRecord,
  afterSeq: number,
  turn: TurnChunks,
): void {
  streamTurn(request, reply, services, session, afterSeq, turn).catch((error: unknown) => {
    request.log.error({ err: error }, "AI SDK stream failed");
    if (!reply.raw.writableEnded) reply.raw.destroy();
  });
}
