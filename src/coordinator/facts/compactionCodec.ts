import type { Fact } from "../facts.js";
import type { TypedFact } from "../factVocabulary.js";
import { count, text } from "./bodyValues.js";
import { STORED_TYPE } from "./storedTypes.js";
import { decodeUsage, encodeSpanUsage } from "./usageCodec.js";

export type CompactionFact = Extract<TypedFact, { kind: "context_compacted" }>;

/**
 * A compaction as stored: the summary, the last thread version it replaces, and the summarization
 * request's model and usage. Only the runtime reads these fields; the wire shows the event's id and time.
 */
export const compactionDecoders: Record<string, (f: Fact) => CompactionFact> = {
  [STORED_TYPE.context_compacted]: ({ id, body }) => ({
    id,
    kind: "context_compacted",
    summary: text(body.summary),
    throughSeq: count(body.through_seq),
    model: text(body.model),
    usage: decodeUsage(body.model_usage),
  }),
};

export function encodeCompaction(f: CompactionFact): Fact {
  return {
    id: f.id,
    type: STORED_TYPE.context_compacted,
    body: {
      summary: f.summary,
      through_seq: f.throughSeq,
      model: f.model,
      model_usage: encodeSpanUsage(f.usage),
    },
  };
}
