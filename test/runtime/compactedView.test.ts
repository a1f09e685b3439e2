/**
 * The compacted view: what the model is sent once a thread's history was compacted (the latest
 * summary and the facts after its boundary), where a compaction may cut, and the count the
 * compaction limit applies to. Built from committed facts alone, as every worker builds it.
 */
import { describe, expect, it } from "vitest";
import { decodeCommitted } from "../../src/coordinator/factCodec.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import type { CommittedTypedFact } from "../../src/coordinator/factVocabulary.js";
import type { JsonObject } from "../../src/kernel/json.js";
import { estimateMessageTokens } from "../../src/providers/tokenEstimate.js";
import {
  compactionCut,
  compactionsInARow,
  modelView,
  viewConversation,
} from "../../src/runtime/compactedView.js";
import { SUMMARY_PREFIX } from "../../src/runtime/conversation.js";

class History {
  readonly facts: CommittedFact[] = [];

  add(type: string, body: JsonObject = {}): number {
    const seq = this.facts.length + 1;
    this.facts.push({
      id: `sevt_${seq}`,
      type,
      body,
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq,
      createdAt: 0,
    });
    return seq;
  }
  say(text: string): number {
    return this.add("user.message", { content: [{ type: "text", text }] });
  }
  /** A model request answered with `text`, committed as the runtime does (start, answer, end). */
  answer(text: string, isError = false): number {
    const start = this.add("span.model_request_start", { provider: "fake", model: "m" });
    if (!isError) this.add("agent.message", { content: [{ type: "text", text }] });
    return this.add("span.model_request_end", {
      model_request_start_id: `sevt_${start}`,
      is_error: isError,
      model_usage: {},
    });
  }
  /** A request that calls a custom tool; returns the call's id. */
  callTool(name: string): string {
    const start = this.add("span.model_request_start", { provider: "fake", model: "m" });
    const call = this.add("agent.custom_tool_use", { name, input: {} });
    this.add("span.model_request_end", {
      model_request_start_id: `sevt_${start}`,
      is_error: false,
      model_usage: {},
    });
    return `sevt_${call}`;
  }
  result(callId: string, text: string): number {
    return this.add("user.custom_tool_result", {
      custom_tool_use_id: callId,
      content: [{ type: "text", text }],
      is_error: false,
    });
  }
  compact(summary: string, throughSeq: number): number {
    return this.add("agent.thread_context_compacted", {
      summary,
      through_seq: throughSeq,
      model_usage: { input_tokens: 10, output_tokens: 2 },
    });
  }
  idle(): number {
    return this.add("session.status_idle", { stop_reason: { type: "end_turn" } });
  }
  typed(): CommittedTypedFact[] {
    return this.facts.map(decodeCommitted);
  }
}

const text = (t: string) => ({ type: "text" as const, text: t });

describe("the model view", () => {
  it("is the whole history when the thread was never compacted", () => {
    const h = new History();
    h.say("one");
    h.answer("a");
    const view = modelView(h.typed());
    expect(view.summary).toBeNull();
    expect(view.throughSeq).toBe(0);
    expect(view.facts).toHaveLength(h.facts.length);
    expect(viewConversation(view)).toEqual([
      { role: "user", content: [text("one")] },
      { role: "assistant", content: [text("a")] },
    ]);
  });

  it("is the summary and the facts after the boundary once compacted, the older turns left out", () => {
    const h = new History();
    h.say("old question");
    const through = h.answer("old answer");
    h.say("new question");
    h.compact("they talked about old things", through);
    const view = modelView(h.typed());
    expect(view.summary).toBe("they talked about old things");
    expect(view.throughSeq).toBe(through);
    expect(view.facts.every((f) => f.seq > through)).toBe(true);
    const conversation = viewConversation(view);
    expect(conversation).toEqual([
      {
        role: "user",
        content: [text(`${SUMMARY_PREFIX}they talked about old things`), text("new question")],
      },
    ]);
    expect(JSON.stringify(conversation)).not.toContain("old question");
  });

  it("reads the latest compaction only: each summary retells the one before", () => {
    const h = new History();
    h.say("first");
    const first = h.answer("1");
    h.compact("summary one", first);
    h.say("second");
    const second = h.answer("2");
    h.compact("summary two", second);
    h.say("third");
    const conversation = viewConversation(modelView(h.typed()));
    expect(conversation[0]?.content[0]).toEqual(text(`${SUMMARY_PREFIX}summary two`));
    expect(JSON.stringify(conversation)).not.toContain("summary one");
    expect(JSON.stringify(conversation)).not.toContain("second");
    expect(JSON.stringify(conversation)).toContain("third");
  });

  it("keeps an answer after the boundary in order after the summary", () => {
    const h = new History();
    const through = h.say("question");
    h.answer("answer");
    h.compact("asked a question", through);
    expect(viewConversation(modelView(h.typed()))).toEqual([
      { role: "user", content: [text(`${SUMMARY_PREFIX}asked a question`)] },
      { role: "assistant", content: [text("answer")] },
    ]);
  });
});

describe("where a compaction cuts", () => {
  it("keeps the newest facts that fit and summarizes the rest", () => {
    const h = new History();
    const long = "x".repeat(400); // 100 tokens each
    h.say(`1 ${long}`);
    h.answer("a1");
    const second = h.say(`2 ${long}`);
    h.answer("a2");
    h.say(`3 ${long}`);
    const view = modelView(h.typed());
    const cut = compactionCut(view, 150);
    // The last answer and question fit 150 tokens (the second question does not): the rest goes.
    expect(cut).toBe(second);
    const kept = viewConversation({ ...view, facts: view.facts.filter((f) => f.seq > (cut ?? 0)) });
    expect(estimateMessageTokens(kept)).toBeLessThanOrEqual(150);
    // With room for everything after the first question, only that question goes.
    expect(compactionCut(view, 1_000)).toBe(1);
  });

  it("summarizes everything when not even the newest fact fits", () => {
    const h = new History();
    h.say("y".repeat(4_000));
    h.answer("ok");
    const last = h.say("z".repeat(4_000));
    expect(compactionCut(modelView(h.typed()), 10)).toBe(last);
  });

  it("never separates a tool call from its result", () => {
    const h = new History();
    h.say("use the tool");
    const call = h.callTool("lookup");
    const result = h.result(call, "r".repeat(2_000));
    h.answer("done");
    const view = modelView(h.typed());
    // Keeping only the answer would fit, but any cut between the call and its result is refused.
    for (const keep of [0, 5, 100, 600, 10_000]) {
      const cut = compactionCut(view, keep);
      const callSeq = Number(call.slice("sevt_".length));
      expect(cut !== null && cut >= callSeq && cut < result).toBe(false);
    }
  });

  it("does not cut a view it cannot cut", () => {
    expect(compactionCut({ summary: null, throughSeq: 0, facts: [] }, 100)).toBeNull();
  });
});

describe("compactions in a row", () => {
  it("counts compactions since the model last answered, the turn ended or an interrupt", () => {
    const h = new History();
    h.say("q");
    h.compact("s1", 1);
    h.compact("s2", 1);
    expect(compactionsInARow(h.typed())).toBe(2);
    h.answer("failed", true);
    expect(compactionsInARow(h.typed())).toBe(2);
    h.answer("answered");
    expect(compactionsInARow(h.typed())).toBe(0);
    h.compact("s3", 2);
    expect(compactionsInARow(h.typed())).toBe(1);
    h.idle();
    expect(compactionsInARow(h.typed())).toBe(0);
    h.compact("s4", 2);
    h.add("user.interrupt");
    expect(compactionsInARow(h.typed())).toBe(0);
  });
});
