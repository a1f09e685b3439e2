/**
 * One scenario, written once against `ProtocolDriver`, that every client protocol must pass the
 * same way: a plain message, a server tool, a client tool, an approval allowed and one denied, an
 * interrupt, a failed turn, a disconnect and a reconnect. After each step the client's own view
 * must agree with the committed history read over the Managed wire (the same end, the same calls
 * in the same states, the same last text), the history must be sound (see `soundHistory.ts`), and
 * the protocol's own history read must tell the same turns.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { textOf, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import type { ConformanceServer } from "./conformanceServer.js";
import { answeredCallId, endOf, lastTurn, managedTurns, managedView } from "./managedHistory.js";
import type { ProtocolDriver, TurnEnd, TurnView } from "./protocolDriver.js";
import { expectSoundHistory } from "./soundHistory.js";

export interface ScenarioContext {
  server: ConformanceServer;
  driver: ProtocolDriver;
  sessionId: string;
  /** Every user text sent so far, in order: the history must hold each exactly once. */
  said: string[];
}

export interface ScenarioStep {
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
}

const SLOW_WORDS = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

function say(ctx: ScenarioContext, text: string): Promise<TurnView> {
  ctx.said.push(text);
  return ctx.driver.say(text);
}

/**
 * Waits for the turn to rest in the committed history, checks it is sound, that it ended as
 * `end` says, and that the protocol's history read tells the same turns; returns the events.
 */
async function committed(ctx: ScenarioContext, end: TurnEnd): Promise<WireEvent[]> {
  const { client } = ctx.server;
  await waitForHistory(client, ctx.sessionId, (events) => endOf(lastTurn(events)) !== null);
  const events = await expectSoundHistory(ctx.server, ctx.sessionId, ctx.said);
  expect(endOf(lastTurn(events)), "how the committed turn ended").toBe(end);
  if (ctx.driver.history) {
    expect(await ctx.driver.history(), "the protocol's history read").toEqual(managedTurns(events));
  }
  return events;
}

/** The client's view agrees with the committed one: end, calls (ids, names, states), text, error. */
async function committedAgrees(ctx: ScenarioContext, view: TurnView): Promise<WireEvent[]> {
  const events = await committed(ctx, view.end);
  const truth = managedView(events);
  expect(view.toolCalls, "the calls the client shows").toEqual(truth.toolCalls);
  expect(view.text, "the last text the client shows").toBe(truth.text);
  if (view.end === "error") expect(view.error, "the error the client was told").toBe(truth.error);
  return events;
}

const ofTurn = (events: WireEvent[], type: string) => lastTurn(events).filter((e) => e.type === type);

export const ADAPTER_SCENARIO: ScenarioStep[] = [
  {
    name: "a plain message ends naturally with the model's text",
    async run(ctx) {
      ctx.server.model.enqueue({ kind: "text", text: "Hello from the script." });
      const view = await say(ctx, "hello there");
      expect(view).toEqual({ end: "natural", text: "Hello from the script.", toolCalls: [] });
      await committedAgrees(ctx, view);
    },
  },
  {
    name: "a server tool (bash, always allowed) runs on the server inside the turn",
    async run(ctx) {
      ctx.server.model.enqueue(
        {
          kind: "tool_use",
          name: "bash",
          input: { command: "echo conformance-bash" },
          text: "Running bash.",
        },
        { kind: "text", text: "bash is done." },
      );
      const view = await say(ctx, "run bash please");
      expect(view).toEqual({
        end: "natural",
        text: "bash is done.",
        toolCalls: [{ id: expect.any(String), name: "bash", state: "done" }],
      });
      const events = await committedAgrees(ctx, view);
      const result = ofTurn(events, "agent.tool_result");
      expect(result).toHaveLength(1);
      expect(result[0]).toMatchObject({ tool_use_id: view.toolCalls[0]?.id, is_error: false });
      expect(textOf(result[0])).toContain("conformance-bash");
    },
  },
  {
    name: "a client tool waits for the client, whose answer is committed once and reaches the model",
    async run(ctx) {
      ctx.server.model.enqueue({ kind: "tool_use", name: "get_weather", input: { city: "Oslo" } });
      const waiting = await say(ctx, "what is the weather in Oslo?");
      expect(waiting).toMatchObject({
        end: "waiting",
        toolCalls: [{ id: expect.any(String), name: "get_weather", state: "awaiting_result" }],
      });
      await committedAgrees(ctx, waiting);
      const callId = waiting.toolCalls[0]?.id as string;

      ctx.server.model.enqueue({ kind: "text", text: "It is sunny in Oslo." });
      const answered = await ctx.driver.answerClientTool(callId, "Sunny, 21C");
      expect(answered).toEqual({
        end: "natural",
        text: "It is sunny in Oslo.",
        toolCalls: [{ id: callId, name: "get_weather", state: "done" }],
      });
      const events = await committedAgrees(ctx, answered);
      const results = events.filter((e) => answeredCallId(e) === callId);
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ type: "user.custom_tool_result" });
      expect(textOf(results[0])).toBe("Sunny, 21C");
      expect(JSON.stringify(ctx.server.model.requests.at(-1)?.body.messages)).toContain("Sunny, 21C");
    },
  },
  {
    name: "an approval allowed runs the tool and the turn goes on",
    async run(ctx) {
      ctx.server.model.enqueue({
        kind: "tool_use",
        name: "write",
        input: { file_path: "allowed.txt", content: "allowed" },
      });
      const asked = await say(ctx, "write allowed.txt");
      expect(asked).toMatchObject({
        end: "waiting",
        toolCalls: [{ id: expect.any(String), name: "write", state: "awaiting_approval" }],
      });
      await committedAgrees(ctx, asked);
      const callId = asked.toolCalls[0]?.id as string;

      ctx.server.model.enqueue({ kind: "text", text: "Written." });
      const view = await ctx.driver.decide(callId, true);
      expect(view).toEqual({
        end: "natural",
        text: "Written.",
        toolCalls: [{ id: callId, name: "write", state: "done" }],
      });
      const events = await committedAgrees(ctx, view);
      expect(ofTurn(events, "user.tool_confirmation")).toMatchObject([
        { tool_use_id: callId, result: "allow" },
      ]);
      expect(ofTurn(events, "agent.tool_result")).toMatchObject([{ tool_use_id: callId, is_error: false }]);
      expect(existsSync(join(ctx.server.t.dataDir, "workspaces", ctx.sessionId, "allowed.txt"))).toBe(true);
    },
  },
  {
    name: "an approval denied never runs the tool and the model is told why",
    async run(ctx) {
      ctx.server.model.enqueue({
        kind: "tool_use",
        name: "write",
        input: { file_path: "denied.txt", content: "denied" },
      });
      const asked = await say(ctx, "write denied.txt");
      expect(asked.toolCalls).toMatchObject([{ name: "write", state: "awaiting_approval" }]);
      const callId = asked.toolCalls[0]?.id as string;

      ctx.server.model.enqueue({ kind: "text", text: "I will not write it." });
      const view = await ctx.driver.decide(callId, false, "not today");
      expect(view).toEqual({
        end: "natural",
        text: "I will not write it.",
        toolCalls: [{ id: callId, name: "write", state: "denied" }],
      });
      const events = await committedAgrees(ctx, view);
      expect(ofTurn(events, "user.tool_confirmation")).toMatchObject([
        { tool_use_id: callId, result: "deny", deny_message: "not today" },
      ]);
      const result = ofTurn(events, "agent.tool_result");
      expect(result).toMatchObject([{ tool_use_id: callId, is_error: true }]);
      expect(textOf(result[0])).toContain("not today");
      expect(existsSync(join(ctx.server.t.dataDir, "workspaces", ctx.sessionId, "denied.txt"))).toBe(false);
    },
  },
  {
    name: "an interrupt of a running turn ends it interrupted and commits none of its text",
    async run(ctx) {
      ctx.server.model.enqueue({ kind: "text", text: SLOW_WORDS, chunkDelayMs: 40 });
      ctx.said.push("tell me a long story");
      const view = await ctx.driver.interruptDuringTurn("tell me a long story");
      expect(view.end).toBe("interrupted");
      expect(view.toolCalls).toEqual([]);
      const events = await committed(ctx, "interrupted");
      expect(ofTurn(events, "user.interrupt")).toHaveLength(1);
      expect(ofTurn(events, "agent.message")).toEqual([]);
    },
  },
  {
    name: "a failed model request ends the turn in error, with the same message everywhere",
    async run(ctx) {
      ctx.server.model.enqueue({
        kind: "error",
        status: 400,
        message: "conformance: this request is refused",
      });
      const view = await say(ctx, "this one fails");
      expect(view).toMatchObject({ end: "error", toolCalls: [] });
      expect(view.error).toContain("conformance: this request is refused");
      const events = await committedAgrees(ctx, view);
      expect(ofTurn(events, "session.error")).not.toEqual([]);
    },
  },
  {
    name: "a disconnect mid-turn, then a reconnect, shows the turn as the history holds it",
    async run(ctx) {
      ctx.server.model.enqueue({ kind: "text", text: SLOW_WORDS, chunkDelayMs: 40 });
      ctx.said.push("answer slowly");
      await ctx.driver.disconnectMidTurn("answer slowly");
      if (ctx.driver.disconnectInterrupts) {
        // Going away is stopping, on this protocol: the interrupt is committed before any reconnect.
        const events = await committed(ctx, "interrupted");
        expect(ofTurn(events, "user.interrupt")).toHaveLength(1);
        expect(ofTurn(events, "agent.message")).toEqual([]);
      } else {
        const status = (await ctx.server.client.beta.sessions.retrieve(ctx.sessionId)).status;
        expect(status, "the turn runs on without its reader").toBe("running");
      }
      const view = await ctx.driver.reconnect();
      const expectedText = ctx.driver.disconnectInterrupts ? "" : SLOW_WORDS;
      expect(view).toEqual({ end: "natural", text: expectedText, toolCalls: [] });
      const events = await committed(ctx, ctx.driver.disconnectInterrupts ? "interrupted" : "natural");
      expect(managedView(events).text).toBe(expectedText);
    },
  },
  {
    name: "the protocol's history read tells every turn as the Managed events list does",
    async run(ctx) {
      const events = await expectSoundHistory(ctx.server, ctx.sessionId, ctx.said);
      const turns = (await ctx.driver.history?.()) ?? [];
      expect(turns).toEqual(managedTurns(events));
      expect(turns.map((t) => t.user)).toEqual(ctx.said);
      expect(turns.flatMap((t) => t.toolCalls.map((c) => c.name))).toEqual([
        "bash",
        "get_weather",
        "write",
        "write",
      ]);
    },
  },
];
