import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { PendingAction } from "../../coordinator/facts.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { EdgeServices } from "../http/edgeServices.js";
import type { CommittedView } from "./chatInputs.js";

const PAGE = 1000;

/** A session's whole committed history, as the domain reads it. */
export async function readHistory(
  services: EdgeServices,
  session: SessionRecord,
): Promise<CommittedTypedFact[]> {
  const facts: CommittedTypedFact[] = [];
  let after = 0;
  for (;;) {
    const page = await services.stream.history.readThread(session.threadId, after, PAGE);
    for (const fact of page) facts.push(decodeCommitted(fact));
    const last = page.at(-1);
    if (!last || page.length < PAGE) return facts;
    after = last.seq;
  }
}

export async function committedView(
  services: EdgeServices,
  facts: readonly CommittedTypedFact[],
  session: SessionRecord,
): Promise<CommittedView> {
  const clientMessageIds = new Set<string>();
  for (const fact of facts) {
    if (fact.kind === "user_message" && fact.clientMessageId !== undefined)
      clientMessageIds.add(fact.clientMessageId);
  }
  // A child's asks were cross-posted on this history; what each child still waits for is its own
  // thread's (the answers are routed there by call id), read only when there were any.
  if (!facts.some((f) => f.kind === "thread_ask")) return { clientMessageIds, pending: session.pending };
  const children: PendingAction[] = [];
  let cursor: string | null = null;
  do {
    const { page } = await services.sessions.listThreads(session.workspaceId, session.id, {
      limit: PAGE_OF_THREADS,
      cursor,
    });
    for (const thread of page.data)
      if (thread.parentThreadId !== null)
        children.push(...thread.pending.filter((p) => p.kind !== "thread_answer"));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return { clientMessageIds, pending: [...session.pending, ...children] };
}

const PAGE_OF_THREADS = 100;

/**
 * Whether the session's run is still going: the last status fact is not an idle (or the end).
 * Read from the facts rather than the row so it agrees with the history about to be replayed.
 */
export function runIsActive(facts: readonly CommittedTypedFact[]): boolean {
  for (let i = facts.length - 1; i >= 0; i--) {
    const kind = facts[i]?.kind;
    if (kind === "status_running" || kind === "status_rescheduled") return true;
    if (kind === "status_idle" || kind === "status_terminated" || kind === "session_deleted") return false;
  }
  return false;
}
