/**
 * The AI SDK edge's turn formatter against the official client's own stream reader: every turn
 * shape yields chunks the client accepts, and the message it builds equals the history read.
 */
import type { UIMessage, UIMessageChunk } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import type { CommittedTypedFact } from "../../src/coordinator/factVocabulary.js";
import { historyMessages } from "../../src/edge/ai-sdk/historyMessages.js";
import {
  type PreviewEvidence,
  TurnChunks,
  type TurnChunksOptions,
  type TurnItem,
} from "../../src/edge/ai-sdk/turnChunks.js";
import { AI_SDK_CLIENTS } from "../support/aiSdkClients.js";
import { clientMessage, thread, useAiSdkClient } from "./aiSdkFacts.js";

const fact = (f: CommittedTypedFact): TurnItem => ({ kind: "fact", fact: f });
const preview = (evidence: PreviewEvidence): TurnItem => ({ kind: "preview", evidence });

function run(items: TurnItem[], options: Partial<TurnChunksOptions> = {}) {
  const turn = new TurnChunks({ messageId: "asst_u1", ...options });
  const chunks: UIMessageChunk[] = [...turn.start()];
  for (const item of items) {
    if (turn.done) break;
    chunks.push(...turn.push(item));
  }
  return { chunks, done: turn.done, types: chunks.map((c) => c.type) };
}

const assistantOf = (messages: UIMessage[]) => messages.filter((m) => m.role === "assistant").at(-1);

// Every chunk sequence is folded by the client of each major: `ai` 6 and 7 must both accept it.
describe.each(AI_SDK_CLIENTS)("$label", (each) => {
  beforeAll(() => {
    useAiSdkClient(each.ai);
  });

  describe("TurnChunks", () => {
    it("streams a text turn from its previews and matches the history", async () => {
      const t = thread();
      const user = t.user("hi", "c1", "u1");
      const facts = [t.running(), t.requestStart(), t.say("Hello there", "m1"), t.requestEnd(), t.idleEnd()];
      const items: TurnItem[] = [
        fact(facts[0]!),
        fact(facts[1]!),
        preview({ kind: "preview_start", eventId: "m1", preview: "text" }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "Hello " }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "there" }),
        ...facts.slice(2).map(fact),
      ];
      const { chunks, done, types } = run(items);
      expect(done).toBe(true);
      expect(types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
      ]);
      expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
      const message = await clientMessage(chunks);
      expect(message).toEqual(assistantOf(historyMessages([user, ...facts], "sesn_1")));
      expect(message.id).toBe("asst_u1");
    });

    it("writes a committed message no preview showed as one whole delta", async () => {
      const t = thread();
      t.user("hi", undefined, "u1");
      const { types, chunks } = run([
        fact(t.requestStart()),
        fact(t.say("All at once", "m1")),
        fact(t.requestEnd()),
        fact(t.idleEnd()),
      ]);
      expect(types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
      ]);
      expect(chunks[3]).toEqual({ type: "text-delta", id: "m1", delta: "All at once" });
    });

    it("ignores deltas of a preview that began before the stream opened", async () => {
      const t = thread();
      const { chunks } = run([
        fact(t.requestStart()),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "lost" }),
        fact(t.say("whole text", "m1")),
        fact(t.requestEnd()),
        fact(t.idleEnd()),
      ]);
      const message = await clientMessage(chunks);
      expect(message.parts).toEqual([
        { type: "step-start" },
        { type: "text", text: "whole text", state: "done" },
      ]);
    });

    it("runs a server tool inside the turn: input, output, then the next step", async () => {
      const t = thread();
      const user = t.user("call bash", "c1", "u1");
      const facts = [
        t.running(),
        t.requestStart(),
        t.say("Calling bash.", "m1"),
        t.call(
          {
            name: "bash",
            input: { command: "echo hi" },
            executor: "server",
            permission: { decision: "allow", evaluation: null },
          },
          "call1",
        ),
        t.requestEnd(),
        t.result("call1", "hi\n"),
        t.requestStart(),
        t.say("Done.", "m2"),
        t.requestEnd(),
        t.idleEnd(),
      ];
      const { chunks, types } = run([
        fact(facts[0]!),
        fact(facts[1]!),
        preview({ kind: "preview_start", eventId: "m1", preview: "text" }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "Calling bash." }),
        preview({ kind: "preview_start", eventId: "call1", preview: "tool_input", toolName: "bash" }),
        preview({ kind: "preview_delta", eventId: "call1", index: 1, text: '{"command":' }),
        preview({ kind: "preview_delta", eventId: "call1", index: 1, text: '"echo hi"}' }),
        ...facts.slice(2).map(fact),
      ]);
      expect(types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-delta",
        "text-end",
        "tool-input-available",
        "finish-step",
        "tool-output-available",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
      ]);
      expect(chunks.find((c) => c.type === "tool-input-available")).toMatchObject({ providerExecuted: true });
      const message = await clientMessage(chunks);
      const tool = message.parts.find((p) => p.type === "tool-bash");
      expect(tool).toMatchObject({
        state: "output-available",
        output: "hi\n",
        input: { command: "echo hi" },
      });
      // The history has no preview order, so compare what both hold: parts by type, state and content.
      const history = assistantOf(historyMessages([user, ...facts], "sesn_1"))!;
      expect(summary(message)).toEqual(summary(history));
    });

    it("pauses for a client tool with finish(tool-calls); the continuation skips the client's own result", async () => {
      const t = thread();
      const user = t.user("weather", "c1", "u1");
      const first = [
        t.running(),
        t.requestStart(),
        t.call({ name: "get_weather", input: { city: "Oslo" }, executor: "client" }, "call1"),
        t.requestEnd(),
        t.idleWaiting(["call1"]),
      ];
      const a = run(first.map(fact));
      expect(a.chunks.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
      expect(a.chunks.find((c) => c.type === "tool-input-available")).not.toHaveProperty("providerExecuted");
      const paused = await clientMessage(a.chunks);
      expect(paused.parts.at(-1)).toMatchObject({ type: "tool-get_weather", state: "input-available" });

      // The client answers in its own message and re-sends it; the server continues the same message.
      const answered: UIMessage = {
        ...paused,
        parts: paused.parts.map((p) =>
          p.type === "tool-get_weather" ? { ...p, state: "output-available", output: { temp: 3 } } : p,
        ) as UIMessage["parts"],
      };
      const second = [
        t.result("call1", '{"temp":3}', { by: "client" }),
        t.running(),
        t.requestStart(),
        t.say("It is 3.", "m2"),
        t.requestEnd(),
        t.idleEnd(),
      ];
      const b = run(second.map(fact), { knownCallIds: ["call1"], clientAnswered: ["call1"] });
      expect(b.types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
      ]);
      const continued = await clientMessage(b.chunks, answered);
      expect(continued.id).toBe("asst_u1");
      expect(continued).toEqual(assistantOf(historyMessages([user, ...first, ...second], "sesn_1")));
    });

    it("asks for approval, then shows the approved call's output on the same message", async () => {
      const t = thread();
      const user = t.user("call bash", "c1", "u1");
      const asks = { decision: "ask" as const, evaluation: null };
      const first = [
        t.running(),
        t.requestStart(),
        t.call({ name: "bash", input: { command: "ls" }, executor: "server", permission: asks }, "call1"),
        t.requestEnd(),
        t.idleWaiting(["call1"]),
      ];
      const a = run(first.map(fact));
      expect(a.types).toEqual([
        "start",
        "start-step",
        "tool-input-available",
        "tool-approval-request",
        "finish-step",
        "finish",
      ]);
      const paused = await clientMessage(a.chunks);
      expect(paused.parts.at(-1)).toMatchObject({ state: "approval-requested", approval: { id: "call1" } });

      const responded = respond(paused, true);
      const second = [
        t.confirm("call1", true),
        t.running(),
        t.result("call1", "a.txt"),
        t.requestStart(),
        t.say("Listed.", "m2"),
        t.requestEnd(),
        t.idleEnd(),
      ];
      const b = run(second.map(fact), { knownCallIds: ["call1"] });
      expect(b.types).toEqual([
        "start",
        "tool-output-available",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
      ]);
      const continued = await clientMessage(b.chunks, responded);
      expect(continued.parts.find((p) => p.type === "tool-bash")).toMatchObject({
        state: "output-available",
        output: "a.txt",
      });
      expect(summary(continued)).toEqual(
        summary(assistantOf(historyMessages([user, ...first, ...second], "sesn_1"))!),
      );
    });

    it("shows a denial as output-denied and hides the server's restated denial", async () => {
      const t = thread();
      const user = t.user("call bash", "c1", "u1");
      const asks = { decision: "ask" as const, evaluation: null };
      const first = [
        t.requestStart(),
        t.call({ name: "bash", input: {}, executor: "server", permission: asks }, "call1"),
        t.requestEnd(),
        t.idleWaiting(["call1"]),
      ];
      const paused = await clientMessage(run(first.map(fact)).chunks);
      const second = [
        t.confirm("call1", false, "no"),
        t.result("call1", "The user denied this tool call: no", { isError: true }),
        t.running(),
        t.requestStart(),
        t.say("OK.", "m2"),
        t.requestEnd(),
        t.idleEnd(),
      ];
      const b = run(second.map(fact), { knownCallIds: ["call1"] });
      expect(b.types.slice(0, 2)).toEqual(["start", "tool-output-denied"]);
      expect(b.types).not.toContain("tool-output-error");
      const continued = await clientMessage(b.chunks, respond(paused, false, "no"));
      expect(continued.parts.find((p) => p.type === "tool-bash")).toMatchObject({ state: "output-denied" });
      const history = assistantOf(historyMessages([user, ...first, ...second], "sesn_1"))!;
      expect(history.parts.find((p) => p.type === "tool-bash")).toMatchObject({
        state: "output-denied",
        approval: { id: "call1", approved: false, reason: "no" },
      });
    });

    it("replays a whole turn through its pauses when resuming", async () => {
      const t = thread();
      const user = t.user("weather", "c1", "u1");
      const facts = [
        t.requestStart(),
        t.call({ name: "get_weather", input: {}, executor: "client" }, "call1"),
        t.requestEnd(),
        t.idleWaiting(["call1"]),
        t.result("call1", '{"temp":3}', { by: "client" }),
        t.running(),
        t.requestStart(),
        t.say("It is 3.", "m2"),
      ];
      const replay = run(facts.map(fact), { replayThroughSeq: facts.at(-1)!.seq });
      expect(replay.done).toBe(false);
      const live = new TurnChunks({ messageId: "asst_u1", replayThroughSeq: facts.at(-1)!.seq });
      const chunks = [...live.start(), ...facts.flatMap((f) => live.push(fact(f)))];
      const tail = [t.requestEnd(), t.idleEnd()];
      for (const f of tail) chunks.push(...live.push(fact(f)));
      expect(live.done).toBe(true);
      const message = await clientMessage(chunks);
      expect(message).toEqual(assistantOf(historyMessages([user, ...facts, ...tail], "sesn_1")));
    });

    it("ends an exhausted turn with the error fact's message", async () => {
      const t = thread();
      const { chunks } = run([
        fact(t.requestStart()),
        fact(t.error("overloaded, retrying", "retrying")),
        fact(t.requestEnd()),
        fact(t.error("The model is overloaded.", "exhausted")),
        fact(t.idleExhausted()),
      ]);
      expect(chunks.slice(-2)).toEqual([
        { type: "error", errorText: "The model is overloaded." },
        { type: "finish", finishReason: "error" },
      ]);
    });

    it("ends an interrupted turn with abort, closing the open text", async () => {
      const t = thread();
      const { types } = run([
        fact(t.requestStart()),
        preview({ kind: "preview_start", eventId: "m1", preview: "text" }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "partial" }),
        fact(t.interrupt()),
        fact(t.requestEnd()),
        fact(t.idleEnd()),
      ]);
      expect(types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "abort",
        "finish",
      ]);
    });

    it("ends a turn interrupted while only previews streamed (the request committed no span) with abort", async () => {
      const t = thread();
      const { types } = run([
        fact(t.running()),
        preview({ kind: "preview_start", eventId: "m1", preview: "text" }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "partial" }),
        fact(t.interrupt()),
        fact(t.idleEnd()),
      ]);
      expect(types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "abort",
        "finish",
      ]);
    });

    it("files a span start committed with its answer in the step its previews opened", async () => {
      const t = thread();
      const user = t.user("hi", "c1", "u1");
      const facts = [t.running(), t.requestStart(), t.say("Hello there", "m1"), t.requestEnd(), t.idleEnd()];
      const { chunks, types } = run([
        fact(facts[0]!),
        preview({ kind: "preview_start", eventId: "m1", preview: "text" }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "Hello there" }),
        ...facts.slice(1).map(fact),
      ]);
      expect(types).toEqual([
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
      ]);
      const message = await clientMessage(chunks);
      expect(message).toEqual(assistantOf(historyMessages([user, ...facts], "sesn_1")));
    });

    it("closes abandoned previews so a retried request starts clean parts", async () => {
      const t = thread();
      const { chunks } = run([
        fact(t.requestStart()),
        preview({ kind: "preview_start", eventId: "m1", preview: "thinking" }),
        preview({ kind: "preview_delta", eventId: "m1", index: 0, text: "hmm" }),
        preview({ kind: "preview_start", eventId: "call1", preview: "tool_input", toolName: "bash" }),
        preview({ kind: "preview_abandoned", eventId: "m1" }),
        preview({ kind: "preview_abandoned", eventId: "call1" }),
        fact(t.requestEnd()),
        fact(t.idleEnd()),
      ]);
      const message = await clientMessage(chunks);
      expect(message.parts).toMatchObject([
        { type: "step-start" },
        { type: "reasoning", text: "hmm", state: "done" },
        { type: "tool-bash", state: "output-error", providerExecuted: true },
      ]);
    });

    it("never writes an output for a call the client's message does not hold", async () => {
      const t = thread();
      const { types } = run([
        fact(t.result("elsewhere", "x")),
        fact(t.confirm("elsewhere", false)),
        fact(t.idleEnd()),
      ]);
      expect(types).toEqual(["start", "finish"]);
    });

    it("writes nothing after the turn ended", () => {
      const t = thread();
      const turn = new TurnChunks({ messageId: "asst_u1" });
      turn.start();
      turn.push(fact(t.idleEnd()));
      expect(turn.push(fact(t.say("late")))).toEqual([]);
      expect(turn.finish()).toEqual([]);
    });
  });

  function respond(message: UIMessage, approved: boolean, reason?: string): UIMessage {
    return {
      ...message,
      parts: message.parts.map((p) =>
        "approval" in p && p.state === "approval-requested"
          ? {
              ...p,
              state: "approval-responded",
              approval: { id: p.approval.id, approved, ...(reason ? { reason } : {}) },
            }
          : p,
      ) as UIMessage["parts"],
    };
  }

  function summary(message: UIMessage) {
    return message.parts.map((p) => {
      const part = p as Record<string, unknown>;
      return {
        type: part.type,
        state: part.state,
        text: part.text,
        input: part.input,
        output: part.output,
        errorText: part.errorText,
      };
    });
  }
});
