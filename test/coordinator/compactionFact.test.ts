/**
 * A compaction as stored, as the wire shows it and as an erasure leaves it: the summary and its
 * boundary are the runtime's, the wire event is the SDK's `{ id, type, processed_at }`.
 */
import { describe, expect, it } from "vitest";
import { tombstoneStored } from "../../src/coordinator/dataSubjects.js";
import { decodeCommitted, decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import { EMPTY_METER } from "../../src/coordinator/facts.js";
import { projectFacts } from "../../src/coordinator/sessionProjection.js";
import { eventDto } from "../../src/edge/managed-agents/eventDto.js";
import { requestListCost } from "../../src/kernel/listPrices.js";

const stored = {
  id: "sevt_c",
  type: "agent.thread_context_compacted",
  body: {
    summary: "the user asked about invoices",
    through_seq: 12,
    model: "claude-sonnet-4-6",
    model_usage: {
      input_tokens: 300,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  },
};

describe("a compaction fact", () => {
  it("reads as the summary, its boundary and its request's usage, and re-encodes exactly", () => {
    const fact = decodeFact(stored);
    expect(fact).toEqual({
      id: "sevt_c",
      kind: "context_compacted",
      summary: "the user asked about invoices",
      throughSeq: 12,
      model: "claude-sonnet-4-6",
      usage: { inputTokens: 300, outputTokens: 20, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    });
    expect(JSON.stringify(encodeFact(fact))).toBe(JSON.stringify(stored));
  });

  it("is shown on the wire as the SDK declares it: id, type and time only", () => {
    const committed = decodeCommitted({
      ...stored,
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: 14,
      createdAt: 0,
    });
    expect(eventDto(committed)).toEqual({
      id: "sevt_c",
      type: "agent.thread_context_compacted",
      processed_at: "1970-01-01T00:00:00.000Z",
    });
  });

  it("counts its summarization request in the session's usage and list cost", () => {
    const projected = projectFacts(
      {
        status: "running",
        pending: [],
        usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
        meter: EMPTY_METER,
      },
      [decodeFact(stored)],
      0,
    );
    expect(projected.usage).toEqual({
      inputTokens: 301,
      outputTokens: 21,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
    const cost = requestListCost("claude-sonnet-4-6", {
      inputTokens: 300,
      outputTokens: 20,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
    expect(cost).not.toBeNull();
    expect(projected.meter.listCost).toBe(String(cost));
  });

  it("loses its summary to a data subject's erasure, keeping its boundary", () => {
    const erased = tombstoneStored(stored);
    expect(erased?.body).toMatchObject({ summary: "[erased]", through_seq: 12 });
    expect(tombstoneStored(erased ?? stored)).toBeNull();
  });
});
