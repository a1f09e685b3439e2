import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { HistoryReader, LiveEvidence, SessionRecord } from "../../coordinator/ports.js";
import type { SessionTail } from "../../coordinator/sessionTail.js";

/** A tail item with its committed fact decoded to the product's vocabulary. */
export type TypedTailItem =
  | { kind: "fact"; fact: CommittedTypedFact }
  | { kind: "preview"; evidence: LiveEvidence };

const PAGE = 500;

/**
 * A thread's committed facts with seq in (afterSeq, upToSeq], decoded, read a page at a time: the
 * protocol edges that rebuild a conversation or a task from history share this one read.
 */
export async function readTypedHistory(
  history: HistoryReader,
  threadId: string,
  afterSeq: number,
  upToSeq?: number,
): Promise<CommittedTypedFact[]> {
  const out: CommittedTypedFact[] = [];
  let cursor = afterSeq;
  for (;;) {
    const page = await history.readThread(threadId, cursor, PAGE);
    for (const fact of page) {
      if (upToSeq !== undefined && fact.seq > upToSeq) return out;
      out.push(decodeCommitted(fact));
    }
    if (page.length < PAGE) return out;
    cursor = page.at(-1)!.seq;
  }
}

/**
 * The session tail with previews, its facts decoded. It is open (subscribed) from this call, not
 * from the first pull: a caller that opens it before writing its input hears every preview of the
 * turn that input starts. It stops when `signal` aborts.
 */
export function typedTail(
  tail: SessionTail,
  session: SessionRecord,
  afterSeq: number,
  signal: AbortSignal,
): AsyncGenerator<TypedTailItem> {
  const items = tail.open(session, { afterSeq, previews: true, signal });
  return (async function* () {
    for await (const item of items) {
      yield item.kind === "fact" ? { kind: "fact" as const, fact: decodeCommitted(item.fact) } : item;
    }
  })();
}
