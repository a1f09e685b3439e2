/**
 * The Managed edge projects typed facts type by type, and shows exactly what it showed when it
 * passed stored bodies through: `{ id, type, ...body, processed_at }`, with `session.usage` broken
 * down by cache TTL. Same fields, same values, same order, byte for byte.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCommitted } from "../../src/coordinator/factCodec.js";
import type { CommittedFact, Fact } from "../../src/coordinator/facts.js";
import { eventDto } from "../../src/edge/managed-agents/dto.js";
import { isoTime } from "../../src/kernel/clock.js";
import { storedFact } from "../support/storedFacts.js";

/** The projection as it was: the stored body passed through. */
function passThrough(f: CommittedFact): Record<string, unknown> {
  const usage = f.type === "session.usage" ? (f.body.usage as Record<string, number>) : null;
  const body = usage
    ? {
        ...f.body,
        usage: {
          ...usage,
          cache_creation: {
            ephemeral_5m_input_tokens: usage.cache_creation_input_tokens,
            ephemeral_1h_input_tokens: 0,
          },
        },
      }
    : f.body;
  return { id: f.id, type: f.type, ...body, processed_at: isoTime(f.createdAt) };
}

const committed = (fact: Fact): CommittedFact => ({
  ...fact,
  sessionId: "sesn_1",
  threadId: "sthr_1",
  seq: 3,
  createdAt: 1_700_000_000_000,
});

describe("Managed event projection", () => {
  it("shows every stored shape byte for byte as the pass-through did", () => {
    fc.assert(
      fc.property(
        storedFact.filter(
          (f) => !("awaken_client_message_id" in f.body) && f.type !== "agent.thread_context_compacted",
        ),
        (fact) => {
          const f = committed(fact);
          expect(JSON.stringify(eventDto(decodeCommitted(f)))).toBe(JSON.stringify(passThrough(f)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("never shows a compaction's summary, boundary or usage: the SDK's event has none", () => {
    fc.assert(
      fc.property(
        storedFact.filter((f) => f.type === "agent.thread_context_compacted"),
        (fact) => {
          const f = committed(fact);
          expect(JSON.stringify(eventDto(decodeCommitted(f)))).toBe(
            JSON.stringify({ id: f.id, type: f.type, processed_at: isoTime(f.createdAt) }),
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it("never shows the product's client message id", () => {
    const f = committed({
      id: "sevt_m",
      type: "user.message",
      body: { content: [{ type: "text", text: "hi" }], awaken_client_message_id: "msg_1" },
    });
    expect(eventDto(decodeCommitted(f))).toEqual({
      id: "sevt_m",
      type: "user.message",
      content: [{ type: "text", text: "hi" }],
      processed_at: isoTime(f.createdAt),
    });
  });
});
