import type { PendingAction } from "../../coordinator/facts.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { EdgeServices } from "./edgeServices.js";

const PAGE_OF_THREADS = 100;

/**
 * What a session's child threads wait for from the client (their asks, cross-posted on the
 * primary's history), read only when that history holds any: the UI edges accept an answer to a
 * subagent's call exactly while its thread waits for it, and the answer is routed there by its id.
 */
export async function childAsksPending(
  sessions: Pick<EdgeServices["sessions"], "listThreads">,
  session: SessionRecord,
  facts: readonly CommittedTypedFact[],
): Promise<PendingAction[]> {
  if (!facts.some((f) => f.kind === "thread_ask")) return [];
  const pending: PendingAction[] = [];
  let cursor: string | null = null;
  do {
    const { page } = await sessions.listThreads(session.workspaceId, session.id, {
      limit: PAGE_OF_THREADS,
      cursor,
    });
    for (const thread of page.data)
      if (thread.parentThreadId !== null)
        pending.push(...thread.pending.filter((p) => p.kind !== "thread_answer"));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return pending;
}
