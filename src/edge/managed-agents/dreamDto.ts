import type { DreamView } from "../../dreams/dreamService.js";
import { isoTime } from "../../kernel/clock.js";

// A dream as the wire has it (SDK `BetaDream`): every field always present, inputs as given with
// session ids sorted, the model always as an object, `outputs` empty until the dream completed.

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

export function dreamDto({ dream, usage }: DreamView): Record<string, unknown> {
  return {
    id: dream.id,
    type: "dream",
    status: dream.status,
    inputs: dream.inputs,
    instructions: dream.instructions,
    model: dream.model,
    output_behavior: dream.outputBehavior,
    outputs:
      dream.outputStoreId === null ? [] : [{ type: "memory_store", memory_store_id: dream.outputStoreId }],
    session_id: dream.sessionId,
    error: dream.error,
    usage: {
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cache_creation_input_tokens: usage.cacheCreationInputTokens,
      cache_read_input_tokens: usage.cacheReadInputTokens,
    },
    created_at: isoTime(dream.createdAt),
    ended_at: iso(dream.endedAt),
    archived_at: iso(dream.archivedAt),
  };
}
