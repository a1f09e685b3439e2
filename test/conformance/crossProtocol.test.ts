/**
 * One session, many clients: each protocol's official client picks up where another left off
 * (a message, a client tool's answer, an approval), and afterwards every protocol tells the same
 * history: the Managed events list, the AI SDK history read, an AG-UI MESSAGES_SNAPSHOT, and each
 * client's own state. The committed history stays gap-free and holds nothing twice.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { waitForHistory } from "../support/sdkHelpers.js";
import { A2aDriver } from "./a2aDriver.js";
import { AgUiDriver, agUiTurns } from "./agUiDriver.js";
import { AiSdkDriver, historyTurns } from "./aiSdkDriver.js";
import {
  type ConformanceServer,
  conformanceAgent,
  conformanceSession,
  startConformanceServer,
} from "./conformanceServer.js";
import { ManagedDriver } from "./managedDriver.js";
import { endOf, lastTurn, managedTurns } from "./managedHistory.js";
import type { HistoryTurn, ProtocolDriver } from "./protocolDriver.js";
import { expectSoundHistory } from "./soundHistory.js";

describe.skipIf(postgresUnavailable() !== null)("one session across protocols", () => {
  let server: ConformanceServer;
  const open: ProtocolDriver[] = [];
  beforeAll(async () => {
    server = await startConformanceServer();
  });
  afterAll(async () => {
    for (const driver of open.splice(0)) await driver.close();
    await server?.close();
  });

  function track<D extends ProtocolDriver>(driver: D): D {
    open.push(driver);
    return driver;
  }

  const managed = async (sessionId: string) => track(await ManagedDriver.open(server.client, sessionId));
  const aiSdk = async (sessionId: string) =>
    track(await AiSdkDriver.open(server.t.server.url, server.client, sessionId));

  /** Waits for the turn to rest, checks the history is sound, and returns its turns. */
  async function soundTurns(sessionId: string, said: string[]): Promise<HistoryTurn[]> {
    await waitForHistory(server.client, sessionId, (events) => endOf(lastTurn(events)) !== null);
    return managedTurns(await expectSoundHistory(server, sessionId, said));
  }

  it("AG-UI opens it, Managed answers AG-UI's client tool, the AI SDK answers Managed's, AG-UI comes back", async () => {
    const agentId = await conformanceAgent(server.t, "cross");
    const threadId = `thread-cross-${randomUUID()}`;
    const agUi = track(new AgUiDriver(server.t, agentId, threadId));
    const said: string[] = [];

    // AG-UI: the first message names the thread and so creates the session; the call waits.
    server.model.enqueue({ kind: "tool_use", name: "get_weather", input: { city: "Paris" } });
    said.push("weather in Paris?");
    const paris = await agUi.say("weather in Paris?");
    expect(paris).toMatchObject({
      end: "waiting",
      toolCalls: [{ name: "get_weather", state: "awaiting_result" }],
    });
    const sessions = await server.client.beta.sessions.list({ agent_id: agentId } as never);
    expect(sessions.data).toHaveLength(1);
    const sessionId = sessions.data[0]?.id as string;

    // Managed: answers the call AG-UI's run left waiting, then leaves one of its own.
    const m = await managed(sessionId);
    server.model.enqueue({ kind: "text", text: "Paris is sunny." });
    const parisAnswered = await m.answerClientTool(paris.toolCalls[0]?.id as string, "Sunny, 25C");
    expect(parisAnswered).toMatchObject({ end: "natural", text: "Paris is sunny." });
    server.model.enqueue({ kind: "tool_use", name: "get_weather", input: { city: "Rome" } });
    said.push("and in Rome?");
    const rome = await m.say("and in Rome?");
    expect(rome).toMatchObject({
      end: "waiting",
      toolCalls: [{ name: "get_weather", state: "awaiting_result" }],
    });

    // AI SDK: the session id as the chat id; the page loads the history and answers Managed's call.
    const ai = await aiSdk(sessionId);
    server.model.enqueue({ kind: "text", text: "Rome is warm." });
    const romeAnswered = await ai.answerClientTool(rome.toolCalls[0]?.id as string, "Warm, 28C");
    expect(romeAnswered).toEqual({
      end: "natural",
      text: "Rome is warm.",
      toolCalls: [{ id: rome.toolCalls[0]?.id, name: "get_weather", state: "done" }],
    });
    server.model.enqueue({ kind: "text", text: "You are welcome." });
    said.push("thanks");
    expect(await ai.say("thanks")).toMatchObject({ end: "natural", text: "You are welcome." });

    // Back to the AG-UI client, whose messages are two turns behind: its run catches it up.
    server.model.enqueue({ kind: "text", text: "Last answer." });
    said.push("one more thing");
    expect(await agUi.say("one more thing")).toEqual({ end: "natural", text: "Last answer.", toolCalls: [] });

    const turns = await soundTurns(sessionId, said);
    expect(turns.map((t) => t.user)).toEqual(said);
    expect(turns.map((t) => t.texts.at(-1))).toEqual([
      "Paris is sunny.",
      "Rome is warm.",
      "You are welcome.",
      "Last answer.",
    ]);
    expect(turns.flatMap((t) => t.toolCalls)).toEqual([
      { id: paris.toolCalls[0]?.id, name: "get_weather", answered: true },
      { id: rome.toolCalls[0]?.id, name: "get_weather", answered: true },
    ]);
    // Every protocol's read, and every client's own state, tells the same turns.
    expect(await m.history(), "Managed events list").toEqual(turns);
    expect(await ai.history(), "AI SDK history read").toEqual(turns);
    expect(await agUi.history(), "AG-UI MESSAGES_SNAPSHOT").toEqual(turns);
    expect(agUiTurns(agUi.messages()), "the AG-UI client's messages").toEqual(turns);
    expect(historyTurns(ai.h.chat.messages), "the AI SDK chat's messages (before AG-UI's last turn)").toEqual(
      turns.slice(0, -1),
    );
  });

  it("an AI SDK run waits on an approval that the Managed wire allows; the chat carries on", async () => {
    const { sessionId } = await conformanceSession(server.t, "cross-approval");
    const ai = await aiSdk(sessionId);
    const said = ["write cross.txt"];
    server.model.enqueue({
      kind: "tool_use",
      name: "write",
      input: { file_path: "cross.txt", content: "x" },
    });
    const asked = await ai.say("write cross.txt");
    expect(asked).toMatchObject({
      end: "waiting",
      toolCalls: [{ name: "write", state: "awaiting_approval" }],
    });
    const callId = asked.toolCalls[0]?.id as string;

    const m = await managed(sessionId);
    server.model.enqueue({ kind: "text", text: "Written across." });
    expect(await m.decide(callId, true)).toEqual({
      end: "natural",
      text: "Written across.",
      toolCalls: [{ id: callId, name: "write", state: "done" }],
    });

    // The chat still shows its approval request; a new message from it adds the message alone.
    server.model.enqueue({ kind: "text", text: "Carrying on." });
    said.push("what next?");
    expect(await ai.say("what next?")).toMatchObject({ end: "natural", text: "Carrying on." });

    const turns = await soundTurns(sessionId, said);
    expect(turns[0]?.toolCalls).toEqual([{ id: callId, name: "write", answered: true }]);
    expect(await ai.history()).toEqual(turns);
    // A page loading the chat now shows the call as the Managed client answered it.
    const reloaded = await aiSdk(sessionId);
    expect(historyTurns(reloaded.h.chat.messages)).toEqual(turns);
    const part = reloaded.h.chat.messages[1]?.parts.find((p) => p.type === "tool-write");
    expect(part).toMatchObject({ state: "output-available", approval: { id: callId, approved: true } });
  });

  it("a Managed run waits on an approval that the AI SDK chat denies, the stream shows the rest", async () => {
    const { sessionId } = await conformanceSession(server.t, "cross-approval-reverse");
    const m = await managed(sessionId);
    const said = ["write reverse.txt"];
    server.model.enqueue({
      kind: "tool_use",
      name: "write",
      input: { file_path: "reverse.txt", content: "x" },
    });
    const asked = await m.say("write reverse.txt");
    expect(asked).toMatchObject({
      end: "waiting",
      toolCalls: [{ name: "write", state: "awaiting_approval" }],
    });
    const callId = asked.toolCalls[0]?.id as string;

    const ai = await aiSdk(sessionId);
    server.model.enqueue({ kind: "text", text: "Not written." });
    expect(await ai.decide(callId, false, "no thanks")).toEqual({
      end: "natural",
      text: "Not written.",
      toolCalls: [{ id: callId, name: "write", state: "denied" }],
    });

    const turns = await soundTurns(sessionId, said);
    expect(await m.history()).toEqual(turns);
    const events = await server.client.beta.sessions.events.list(sessionId, { limit: 1000 });
    expect(events.data.filter((e) => e.type === "user.tool_confirmation")).toMatchObject([
      { tool_use_id: callId, result: "deny", deny_message: "no thanks" },
    ]);
  });

  it("approvals cross between AG-UI and the AI SDK both ways", async () => {
    const { agentId, sessionId } = await conformanceSession(server.t, "cross-approval-ag-ui");
    const agUi = track(new AgUiDriver(server.t, agentId, sessionId));
    const said = ["write one.txt"];
    server.model.enqueue({ kind: "tool_use", name: "write", input: { file_path: "one.txt", content: "1" } });
    const first = await agUi.say("write one.txt");
    expect(first).toMatchObject({ end: "waiting", toolCalls: [{ state: "awaiting_approval" }] });

    // The AI SDK allows the call AG-UI's run was interrupted on, and leaves one of its own.
    const ai = await aiSdk(sessionId);
    server.model.enqueue({ kind: "text", text: "One written." });
    const allowed = await ai.decide(first.toolCalls[0]?.id as string, true);
    expect(allowed).toMatchObject({ end: "natural", text: "One written.", toolCalls: [{ state: "done" }] });
    server.model.enqueue({ kind: "tool_use", name: "write", input: { file_path: "two.txt", content: "2" } });
    said.push("write two.txt");
    const second = await ai.say("write two.txt");
    expect(second).toMatchObject({ end: "waiting", toolCalls: [{ state: "awaiting_approval" }] });

    // AG-UI answers it: a run with nothing new tells the client about the interrupt, then it resumes.
    server.model.enqueue({ kind: "text", text: "Two written." });
    const resumed = await agUi.decide(second.toolCalls[0]?.id as string, true);
    expect(resumed).toEqual({
      end: "natural",
      text: "Two written.",
      toolCalls: [{ id: second.toolCalls[0]?.id, name: "write", state: "done" }],
    });

    const turns = await soundTurns(sessionId, said);
    expect(turns.map((t) => t.texts.at(-1))).toEqual(["One written.", "Two written."]);
    expect(await ai.history()).toEqual(turns);
    expect(await agUi.history()).toEqual(turns);
    expect(agUiTurns(agUi.messages())).toEqual(turns);
  });

  it("A2A and the AI SDK answer each other's waits: a client tool one way, an approval the other", async () => {
    const { agentId, sessionId } = await conformanceSession(server.t, "cross-a2a");
    const a2a = track(await A2aDriver.open(server.t, agentId, sessionId));
    const said = ["weather in Lima?"];
    server.model.enqueue({ kind: "tool_use", name: "get_weather", input: { city: "Lima" } });
    const lima = await a2a.say("weather in Lima?");
    expect(lima).toMatchObject({
      end: "waiting",
      toolCalls: [{ name: "get_weather", state: "awaiting_result" }],
    });

    // The AI SDK chat answers the call A2A's task waits on; the task completes.
    const ai = await aiSdk(sessionId);
    server.model.enqueue({ kind: "text", text: "Lima is mild." });
    const limaAnswered = await ai.answerClientTool(lima.toolCalls[0]?.id as string, "Mild, 19C");
    expect(limaAnswered).toMatchObject({ end: "natural", text: "Lima is mild." });

    // The chat asks for an approval; A2A allows it as a follow-up in the task the chat's turn opened.
    server.model.enqueue({ kind: "tool_use", name: "write", input: { file_path: "a2a.txt", content: "x" } });
    said.push("write a2a.txt");
    const asked = await ai.say("write a2a.txt");
    expect(asked).toMatchObject({ end: "waiting", toolCalls: [{ state: "awaiting_approval" }] });
    server.model.enqueue({ kind: "text", text: "Written by A2A's leave." });
    const allowed = await a2a.decide(asked.toolCalls[0]?.id as string, true);
    expect(allowed).toEqual({
      end: "natural",
      text: "Written by A2A's leave.",
      toolCalls: [{ id: asked.toolCalls[0]?.id, name: "write", state: "done" }],
    });

    const turns = await soundTurns(sessionId, said);
    expect(turns.map((t) => t.texts.at(-1))).toEqual(["Lima is mild.", "Written by A2A's leave."]);
    expect(await a2a.history(), "A2A ListTasks").toEqual(turns);
    expect(await ai.history(), "AI SDK history read").toEqual(turns);
  });
});
