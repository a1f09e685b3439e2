import type { SessionRecord } from "../../coordinator/ports.js";
import { AwakenError } from "../../kernel/errors.js";
import type { EdgeServices } from "../http/edgeServices.js";
import type { ChatRequest } from "./chatRequest.js";

/** The session a chat request names: its `threadId`, else the chat's `id`. */
export function sessionNameOf(request: Pick<ChatRequest, "id" | "threadId">): string {
  return request.threadId ?? request.id;
}

export async function findChatSession(
  services: EdgeServices,
  workspaceId: string,
  request: ChatRequest,
): Promise<SessionRecord | null> {
  return services.entry.findNamed(workspaceId, sessionNameOf(request));
}

/** A chat's first message starts its session, when the request says which agent runs it. */
export async function openChatSession(
  services: EdgeServices,
  workspaceId: string,
  request: ChatRequest,
): Promise<SessionRecord> {
  const name = sessionNameOf(request);
  if (!request.agentId) {
    throw new AwakenError(
      "not_found",
      `No session is named ${JSON.stringify(name)} in this workspace. To start one with this chat's first message, ` +
        'pass "agentId" (and optionally "environmentId") in the request body, e.g. with the transport\'s `body` option.',
    );
  }
  return services.entry.openNamed(workspaceId, name, {
    agent: { id: request.agentId },
    ...(request.environmentId !== undefined ? { environmentId: request.environmentId } : {}),
  });
}

/** An archived or terminated session takes nothing more: refused before anything is written. */
export function assertOpen(session: SessionRecord): void {
  if (session.archivedAt !== null || session.status === "terminated") {
    throw new AwakenError(
      "session_terminated",
      `This chat's session ${session.id} is ${session.archivedAt !== null ? "archived" : "terminated"} and accepts no more messages; start a new chat.`,
    );
  }
}
