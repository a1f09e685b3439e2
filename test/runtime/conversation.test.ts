import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCommitted } from "../../src/coordinator/factCodec.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import type { JsonObject } from "../../src/kernel/json.js";
import type { ModelMessage } from "../../src/providers/ports.js";
import { buildConversation } from "../../src/runtime/conversation.js";

class History {
  readonly facts: CommittedFact[] = [];
  private counter = 0;

  add(type: string, body: JsonObject = {}): string {
    const id = `sevt_${++this.counter}`;
    this.facts.push({
      id,
      type,
      body,
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: this.facts.length + 1,
      createdAt: 0,
    });
    return id;
  }
  say(text: string): string {
    return this.add("user.message", { content: [{ type: "text", text }] });
  }
  reply(text: string): string {
    return this.add("agent.message", { content: [{ type: "text", text }] });
  }
  toolUse(name: string, input: JsonObject = {}): string {
    return this.add("agent.custom_tool_use", { name, input });
  }
  result(id: string, text: string, isError = false): string {
    return this.add("user.custom_tool_result", {
      custom_tool_use_id: id,
      content: [{ type: "text", text }],
      is_error: isError,
    });
  }
  /** A model request around `inside`, committed the way the runtime does. */
  request(inside: () => void, isError = false): void {
    const start = this.add("span.model_request_start", { provider: "fake", model: "m" });
    inside();
    this.add("span.model_request_end", { model_request_start_id: start, is_error: isError, model_usage: {} });
    if (!isError) this.add("session.usage", { usage: {} });
  }
  conversation(): ModelMessage[] {
    return buildConversation(this.facts.map(decodeCommitted));
  }
}

const text = (t: string) => ({ type: "text" as const, text: t });

describe("buildConversation", () => {
  it("turns messages into alternating user and assistant turns, ignoring status facts", () => {
    const h = new History();
    h.say("hello");
    h.add("session.status_running");
    h.request(() => h.reply("hi there"));
    h.add("session.status_idle", { stop_reason: { type: "end_turn" } });
    h.say("how are you?");
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("hello")] },
      { role: "assistant", content: [text("hi there")] },
      { role: "user", content: [text("how are you?")] },
    ]);
  });

  it("merges consecutive messages of the same role", () => {
    const h = new History();
    h.say("one");
    h.say("two");
    h.add("session.error", { error: { type: "model_overloaded_error" } });
    h.say("three");
    h.reply("a");
    h.reply("b");
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("one"), text("two"), text("three")] },
      { role: "assistant", content: [text("a"), text("b")] },
    ]);
  });

  it("passes system.message as marked user text", () => {
    const h = new History();
    h.say("question");
    h.add("system.message", { content: [{ type: "text", text: "answer in French" }] });
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("question"), text("[system message] answer in French")] },
    ]);
  });

  it("pairs a custom tool use with its result by the fact id", () => {
    const h = new History();
    h.say("weather?");
    let use = "";
    h.request(() => {
      h.reply("checking");
      use = h.toolUse("lookup", { city: "Paris" });
    });
    h.result(use, "sunny");
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("weather?")] },
      {
        role: "assistant",
        content: [text("checking"), { type: "tool_use", id: use, name: "lookup", input: { city: "Paris" } }],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: use, content: [text("sunny")], is_error: false }],
      },
    ]);
  });

  it("puts tool results first in the user turn, before text queued while the tools ran", () => {
    const h = new History();
    h.say("go");
    let a = "";
    let b = "";
    h.request(() => {
      a = h.toolUse("first");
      b = h.toolUse("second");
    });
    h.say("hurry up");
    h.result(b, "B", true);
    h.add("system.message", { content: [{ type: "text", text: "note" }] });
    h.result(a, "A");
    const last = h.conversation().at(-1);
    expect(last?.role).toBe("user");
    expect(last?.content).toEqual([
      { type: "tool_result", tool_use_id: b, content: [text("B")], is_error: true },
      { type: "tool_result", tool_use_id: a, content: [text("A")], is_error: false },
      text("hurry up"),
      text("[system message] note"),
    ]);
  });

  it("gives interrupted tool uses a synthetic error result", () => {
    const h = new History();
    h.say("go");
    let a = "";
    let b = "";
    h.request(() => {
      a = h.toolUse("first");
      b = h.toolUse("second");
    });
    h.result(a, "done");
    h.add("user.interrupt");
    h.say("never mind");
    const conversation = h.conversation();
    expect(conversation).toHaveLength(3);
    expect(conversation[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: a, content: [text("done")], is_error: false },
        {
          type: "tool_result",
          tool_use_id: b,
          content: [text("The user interrupted before this tool returned a result.")],
          is_error: true,
        },
        text("never mind"),
      ],
    });
  });

  it("places input that arrived mid-request after the answer it did not see", () => {
    const h = new History();
    h.say("first");
    h.request(() => {
      h.say("second");
      h.reply("answer to first");
    });
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("first")] },
      { role: "assistant", content: [text("answer to first")] },
      { role: "user", content: [text("second")] },
    ]);
  });

  it("places input committed before a late span start, after the version its request saw, after the answer", () => {
    const h = new History();
    h.say("first");
    h.say("second");
    const start = h.add("span.model_request_start", { provider: "fake", model: "m", context_seq: 1 });
    h.reply("answer to first");
    h.add("span.model_request_end", { model_request_start_id: start, is_error: false, model_usage: {} });
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("first")] },
      { role: "assistant", content: [text("answer to first")] },
      { role: "user", content: [text("second")] },
    ]);
  });

  it("keeps input that arrived during a failed or dangling request in place", () => {
    const h = new History();
    h.say("first");
    h.request(() => h.say("second"), true);
    h.add("span.model_request_start", { provider: "fake", model: "m" });
    h.say("third");
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("first"), text("second"), text("third")] },
    ]);
  });

  it("passes images and plain-text documents; omits what it cannot pass with a note", () => {
    const h = new History();
    h.add("user.message", {
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
        { type: "image", source: { type: "file", file_id: "file_1" } },
        {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "body" },
          title: "Notes",
        },
        { type: "document", source: { type: "text", media_type: "text/plain", data: "untitled" } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBER" } },
        { type: "redacted" },
        { type: "text", text: "" },
        { type: "text", text: "what is this?" },
      ],
    });
    expect(h.conversation()).toEqual([
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
          { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
          text("[an image this server cannot pass to the model was omitted]"),
          text("Notes\nbody"),
          text("untitled"),
          text("[a document this server cannot pass to the model was omitted]"),
          text("what is this?"),
        ],
      },
    ]);
  });

  it("fills empty tool results and describes non-text result content", () => {
    const h = new History();
    h.say("go");
    let a = "";
    let b = "";
    h.request(() => {
      a = h.toolUse("a");
      b = h.toolUse("b");
    });
    h.add("user.custom_tool_result", { custom_tool_use_id: a });
    h.add("user.custom_tool_result", {
      custom_tool_use_id: b,
      content: [
        { type: "image", source: { type: "url", url: "https://x" } },
        { type: "text", text: "" },
      ],
    });
    expect(h.conversation().at(-1)?.content).toEqual([
      { type: "tool_result", tool_use_id: a, content: [text("(no output)")], is_error: false },
      {
        type: "tool_result",
        tool_use_id: b,
        content: [text("[image content omitted]"), text("(no output)")],
        is_error: false,
      },
    ]);
  });

  it("never passes empty or whitespace-only text, which providers reject; keeps only text of agent messages", () => {
    const h = new History();
    h.add("user.message", {
      content: [
        { type: "text", text: "  " },
        { type: "text", text: "go" },
      ],
    });
    let use = "";
    h.request(() => {
      h.reply("\n\n");
      use = h.toolUse("t");
    });
    h.result(use, " \n");
    h.add("agent.message", { content: [{ type: "redacted" }, { type: "text", text: "" }] });
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("go")] },
      { role: "assistant", content: [{ type: "tool_use", id: use, name: "t", input: {} }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: use, content: [text("(no output)")], is_error: false }],
      },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties over histories the runtime can commit.
// ---------------------------------------------------------------------------------------------

type Op =
  | { kind: "say"; text: string }
  | { kind: "system"; text: string }
  | { kind: "answer"; text: string; tools: number; queued: string | null }
  | { kind: "fail" }
  | { kind: "result"; pick: number }
  | { kind: "interrupt" };

const words = fc.string({ minLength: 1, maxLength: 8 }).filter((w) => w.trim() !== "");
const opArb: fc.Arbitrary<Op> = fc.oneof(
  words.map<Op>((t) => ({ kind: "say", text: t })),
  words.map<Op>((t) => ({ kind: "system", text: t })),
  fc
    .record({
      text: fc.constantFrom("", " ", "\n\n", "sure", "ok "),
      tools: fc.integer({ min: 0, max: 3 }),
      queued: fc.option(words),
    })
    .map<Op>((r) => ({ kind: "answer", ...r })),
  fc.constant<Op>({ kind: "fail" }),
  fc.nat(5).map<Op>((pick) => ({ kind: "result", pick })),
  fc.constant<Op>({ kind: "interrupt" }),
);

function simulate(ops: Op[]): { h: History; pending: string[]; said: string[] } {
  const h = new History();
  let pending: string[] = [];
  const said: string[] = [];
  // Whether input arrived since the last answer: the runtime calls the model only then.
  let needsAnswer = false;
  for (const op of ops) {
    switch (op.kind) {
      case "say":
        h.say(op.text);
        said.push(op.text);
        needsAnswer = true;
        break;
      case "system":
        h.add("system.message", { content: [{ type: "text", text: op.text }] });
        needsAnswer = true;
        break;
      case "answer":
        // The runtime only calls the model when no tool use is waiting.
        if (pending.length > 0 || !needsAnswer) break;
        needsAnswer = op.queued !== null;
        h.request(() => {
          if (op.queued !== null) {
            h.say(op.queued);
            said.push(op.queued);
          }
          if (op.text) h.reply(op.text);
          for (let i = 0; i < op.tools; i++) pending.push(h.toolUse(`tool_${i}`, { i }));
        });
        break;
      case "fail":
        if (pending.length === 0 && needsAnswer) h.request(() => {}, true);
        break;
      case "result": {
        const id = pending[op.pick % Math.max(1, pending.length)];
        if (id === undefined) break;
        h.result(id, `result for ${id}`);
        pending = pending.filter((p) => p !== id);
        needsAnswer = true;
        break;
      }
      case "interrupt":
        h.add("user.interrupt");
        pending = [];
        needsAnswer = false;
        break;
    }
  }
  return { h, pending, said };
}

describe("memory write-back notes", () => {
  it("a note of a write-back outside a tool step reaches the model's next request; one said in a tool result is not repeated", () => {
    const h = new History();
    h.say("keep notes");
    h.request(() => h.reply("Noted."));
    h.add("awaken.memory_written_back", {
      outcomes: [{ memory_store_id: "memstore_1", path: "/a.md", outcome: "conflict", reason: "changed" }],
      notes: ["/mnt/memory/notes/a.md was not saved: the memory changed since you read it"],
      told_in: "next_request",
    });
    h.add("awaken.memory_written_back", {
      outcomes: [],
      notes: ["/mnt/memory/notes/b.md was already said in a tool result"],
      told_in: "tool_result",
    });
    h.say("what happened?");
    expect(h.conversation()).toEqual([
      { role: "user", content: [text("keep notes")] },
      { role: "assistant", content: [text("Noted.")] },
      {
        role: "user",
        content: [
          text("[memory] /mnt/memory/notes/a.md was not saved: the memory changed since you read it"),
          text("what happened?"),
        ],
      },
    ]);
  });
});

describe("buildConversation properties", () => {
  it("roles alternate, no message is empty, and user text keeps its order", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), (ops) => {
        const { h, said } = simulate(ops);
        const conversation = h.conversation();
        for (const [i, message] of conversation.entries()) {
          expect(message.content.length).toBeGreaterThan(0);
          for (const block of message.content)
            if (block.type === "text") expect(block.text.trim()).not.toBe("");
          if (i > 0) expect(message.role).not.toBe(conversation[i - 1]?.role);
        }
        if (conversation.length > 0) expect(conversation[0]?.role).toBe("user");
        const userTexts = conversation
          .filter((m) => m.role === "user")
          .flatMap((m) =>
            m.content.flatMap((b) => (b.type === "text" && !b.text.startsWith("[system") ? [b.text] : [])),
          );
        expect(userTexts).toEqual(said);
      }),
      { numRuns: 300 },
    );
  });

  it("when nothing is pending, every tool use is answered exactly once, first thing in the next user turn", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), (ops) => {
        const { h, pending } = simulate(ops);
        if (pending.length > 0) return;
        const conversation = h.conversation();
        for (const [i, message] of conversation.entries()) {
          if (message.role === "user") {
            const kinds = message.content.map((b) => b.type);
            const firstOther = kinds.findIndex((k) => k !== "tool_result");
            if (firstOther >= 0) expect(kinds.slice(firstOther)).not.toContain("tool_result");
            continue;
          }
          const uses = message.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
          if (uses.length === 0) continue;
          const next = conversation[i + 1];
          expect(next?.role).toBe("user");
          const answered = (next?.content ?? []).flatMap((b) =>
            b.type === "tool_result" ? [b.tool_use_id] : [],
          );
          expect([...answered].sort()).toEqual([...uses].sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a history that needs an answer yields a conversation ending on a user turn", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), words, (ops, last) => {
        const { h, pending } = simulate(ops);
        if (pending.length > 0) return;
        h.say(last);
        expect(h.conversation().at(-1)?.role).toBe("user");
      }),
      { numRuns: 200 },
    );
  });
});
