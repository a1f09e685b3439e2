/**
 * A child thread's asks surfaced on the primary thread: when a child's run parks on calls a client
 * must answer (a permission ask, a custom tool), its parking commit also writes, on its parent's
 * history and in the same transaction, each waiting call (`thread_ask`, with the call's own id, so
 * the client answers it as it would the primary's) and the child's idle status, waiting on them. The
 * client's answer is routed back to the child by that id (coordinator/threadInputRules.ts).
 */

import type { ThreadAnswer } from "../coordinator/commitOperation.js";
import { encodeFact } from "../coordinator/factCodec.js";
import type { CommittedTypedFact, TypedFact } from "../coordinator/factVocabulary.js";
import { newId } from "../kernel/ids.js";
import { parentOf } from "./threadSpawning.js";

export function threadAsks(
  facts: readonly CommittedTypedFact[],
  threadId: string,
  agentName: string,
  now: number,
  /** Facts of the parking commit itself (its calls and its idle), not yet in `facts`. */
  parking: readonly TypedFact[],
): ThreadAnswer | null {
  const parent = parentOf(facts);
  if (parent === null) return null;
  const idle = parking.find((f) => f.kind === "status_idle");
  if (idle?.kind !== "status_idle" || idle.reason.kind !== "waiting") return null;
  const calls = new Map(
    [...facts, ...parking].flatMap((f) => (f.kind === "tool_call" ? [[f.call.id, f.call] as const] : [])),
  );
  const asks: TypedFact[] = idle.reason.callIds.flatMap((id) => {
    const call = calls.get(id);
    return call ? [{ id, kind: "thread_ask" as const, thread: threadId, call }] : [];
  });
  const status: TypedFact = {
    id: newId("sevt", now),
    kind: "thread_status",
    thread: threadId,
    agentName,
    transition: { to: "idle", reason: idle.reason },
  };
  return { parentThreadId: parent, facts: [...asks, status].map(encodeFact) };
}
