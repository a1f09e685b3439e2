import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import { readToolAwaits, toolAwaitsFact } from "../../src/coordinator/facts/internalFacts.js";
import { decodePending, encodePending } from "../../src/coordinator/facts/pendingCodec.js";
import { decodeUsage, encodeSpanUsage, encodeUsage } from "../../src/coordinator/facts/usageCodec.js";
import type { AnswerKind, Fact, PendingAction, SessionUsage } from "../../src/coordinator/facts.js";
import { meterOf, pendingJson, pendingOf, usageJson, usageOf } from "../../src/stores/sql/sessionRows.js";

// The core's domain names (answer kinds, camelCase usage, turn_ended) never reach storage: values
// stored before they existed read as domain values and write back as the very same bytes.

/** Pending columns exactly as the product has always written them. */
const STORED_PENDING = [
  "[]",
  '[{"eventId":"sevt_c","kind":"custom_tool_result"}]',
  '[{"eventId":"sevt_t","kind":"tool_confirmation","afterAllow":"tool_result"}]',
  '[{"eventId":"sevt_m","kind":"tool_confirmation","afterAllow":"server","mcp":true}]',
  '[{"eventId":"sevt_w","kind":"tool_result"},{"eventId":"sevt_x","kind":"tool_result","mcp":true}]',
];

/** Usage columns as written: a commit's (every counter, the session total's order) and a new session's. */
const STORED_USAGE =
  '{"input_tokens":120,"output_tokens":42,"cache_read_input_tokens":77,"cache_creation_input_tokens":9}';

describe("pending actions: stored names ↔ domain names", () => {
  it("each stored answer kind reads as its domain name", () => {
    expect(pendingOf(STORED_PENDING[1]!)).toEqual([{ eventId: "sevt_c", kind: "client_tool_result" }]);
    expect(pendingOf(STORED_PENDING[2]!)).toEqual([
      { eventId: "sevt_t", kind: "confirmation", afterAllow: "client" },
    ]);
    expect(pendingOf(STORED_PENDING[3]!)).toEqual([
      { eventId: "sevt_m", kind: "confirmation", afterAllow: "server", mcp: true },
    ]);
    expect(pendingOf(STORED_PENDING[4]!)).toEqual([
      { eventId: "sevt_w", kind: "server_tool_result" },
      { eventId: "sevt_x", kind: "server_tool_result", mcp: true },
    ]);
  });

  it("a stored column re-encodes to the identical bytes", () => {
    for (const stored of STORED_PENDING) expect(pendingJson(pendingOf(stored))).toBe(stored);
  });

  const action: fc.Arbitrary<PendingAction> = fc
    .record({
      eventId: fc.stringMatching(/^sevt_[0-9a-z]{4}$/),
      kind: fc.constantFrom<AnswerKind>("client_tool_result", "server_tool_result", "confirmation"),
      afterAllow: fc.option(fc.constantFrom("server" as const, "client" as const), { nil: undefined }),
      mcp: fc.option(fc.constant(true as const), { nil: undefined }),
    })
    .map(({ afterAllow, mcp, ...rest }) => ({
      ...rest,
      ...(afterAllow !== undefined ? { afterAllow } : {}),
      ...(mcp !== undefined ? { mcp } : {}),
    }));

  it("any domain list survives storage, and no domain name is stored", () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 4 }), (pending) => {
        const stored = encodePending(pending);
        expect(decodePending(stored)).toEqual(pending);
        for (const entry of stored) {
          expect(["custom_tool_result", "tool_result", "tool_confirmation"]).toContain(entry.kind);
          if (entry.afterAllow !== undefined) expect(["server", "tool_result"]).toContain(entry.afterAllow);
        }
      }),
    );
  });

  it("the resume ticket's stored body keeps its names", () => {
    const ticket = toolAwaitsFact("sevt_a", "sevt_t", "confirmation", "client", true);
    expect(encodeFact(ticket).body).toEqual({
      tool_use_id: "sevt_t",
      answer: "tool_confirmation",
      after_allow: "tool_result",
      mcp: true,
    });
    expect(readToolAwaits(ticket)).toEqual({
      callId: "sevt_t",
      answer: "confirmation",
      afterAllow: "client",
      mcp: true,
      harness: false,
    });
    // An ACP harness's own call: its ticket says so, and its denial is the harness's result.
    const harnessTicket = toolAwaitsFact("sevt_h", "sevt_c", "confirmation", "server", false, true);
    expect(encodeFact(harnessTicket).body).toEqual({
      tool_use_id: "sevt_c",
      answer: "tool_confirmation",
      after_allow: "server",
      harness: true,
    });
    expect(readToolAwaits(harnessTicket)).toMatchObject({ mcp: false, harness: true });
    const result = toolAwaitsFact("sevt_b", "sevt_w", "server_tool_result");
    expect(encodeFact(result).body).toEqual({ tool_use_id: "sevt_w", answer: "tool_result" });
  });
});

describe("usage: stored snake_case ↔ domain camelCase", () => {
  const domain: SessionUsage = {
    inputTokens: 120,
    outputTokens: 42,
    cacheReadInputTokens: 77,
    cacheCreationInputTokens: 9,
  };

  it("a stored usage column reads as domain counters and re-encodes to the identical bytes", () => {
    expect(usageOf(STORED_USAGE)).toEqual(domain);
    expect(usageJson(usageOf(STORED_USAGE), meterOf(STORED_USAGE))).toBe(STORED_USAGE);
  });

  it("a new session's {} (or any counter left out) reads as 0", () => {
    expect(usageOf("{}")).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
    expect(usageOf('{"output_tokens":5}')).toMatchObject({ inputTokens: 0, outputTokens: 5 });
  });

  it("fact bodies keep their stored keys and order: the session total's, and the span's own", () => {
    const total: Fact = { id: "sevt_u", type: "session.usage", body: { usage: JSON.parse(STORED_USAGE) } };
    const decoded = decodeFact(total);
    expect(decoded).toEqual({ id: "sevt_u", kind: "usage", usage: domain });
    expect(JSON.stringify(encodeFact(decoded))).toBe(JSON.stringify(total));

    const span: Fact = {
      id: "sevt_e",
      type: "span.model_request_end",
      body: {
        model_request_start_id: "sevt_s",
        is_error: false,
        provider: "anthropic",
        model: "m",
        model_usage: {
          input_tokens: 120,
          output_tokens: 42,
          cache_creation_input_tokens: 9,
          cache_read_input_tokens: 77,
        },
      },
    };
    const spanDecoded = decodeFact(span);
    expect(spanDecoded).toMatchObject({ kind: "model_request_end", usage: domain });
    expect(JSON.stringify(encodeFact(spanDecoded))).toBe(JSON.stringify(span));
  });

  it("any domain usage survives both stored encodings", () => {
    const counters = fc.record({
      inputTokens: fc.nat(),
      outputTokens: fc.nat(),
      cacheReadInputTokens: fc.nat(),
      cacheCreationInputTokens: fc.nat(),
    });
    fc.assert(
      fc.property(counters, (usage) => {
        expect(decodeUsage(encodeUsage(usage))).toEqual(usage);
        expect(decodeUsage(encodeSpanUsage(usage))).toEqual(usage);
      }),
    );
  });
});

describe("idle reasons: stored stop_reason ↔ domain reason", () => {
  it("a stored end_turn reads as turn_ended and re-encodes to the identical body", () => {
    const idle: Fact = {
      id: "sevt_i",
      type: "session.status_idle",
      body: { stop_reason: { type: "end_turn" }, stop_details: null },
    };
    const decoded = decodeFact(idle);
    expect(decoded).toEqual({ id: "sevt_i", kind: "status_idle", reason: { kind: "turn_ended" } });
    expect(JSON.stringify(encodeFact(decoded))).toBe(JSON.stringify(idle));
  });
});
