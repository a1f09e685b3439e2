/** Committed typed facts for the AG-UI edge's unit tests, and the official client as their judge. */
import { AbstractAgent, type RunAgentResult } from "@ag-ui/client";
import type { AGUIEvent, BaseEvent, Message } from "@ag-ui/core";
import { from, type Observable } from "rxjs";
import type { CommittedTypedFact, FactPayload, ToolCall } from "../../src/coordinator/factVocabulary.js";

let seq = 0;

export function fact(id: string, payload: FactPayload): CommittedTypedFact {
  seq += 1;
  return {
    id,
    ...payload,
    sessionId: "sesn_1",
    threadId: "sthr_1",
    seq,
    createdAt: seq,
  } as CommittedTypedFact;
}

export const text = (t: string) => [{ type: "text", text: t }];

export const user = (id: string, t: string, clientMessageId?: string) =>
  fact(id, { kind: "user_message", content: text(t), ...(clientMessageId ? { clientMessageId } : {}) });
export const agentText = (id: string, t: string) => fact(id, { kind: "agent_message", content: text(t) });
export const call = (c: Partial<ToolCall> & { id: string; name: string }) =>
  fact(c.id, { kind: "tool_call", call: { input: {}, executor: "server", ...c } });
export const result = (id: string, callId: string, t: string, executor: ToolCall["executor"] = "server") =>
  fact(id, { kind: "tool_result", callId, executor, by: "server", content: text(t), isError: false });
export const running = (id: string) => fact(id, { kind: "status_running" });
export const requestStart = (id: string) =>
  fact(id, { kind: "model_request_start", provider: "offline", model: "m" });
export const endTurn = (id: string) => fact(id, { kind: "status_idle", reason: { kind: "turn_ended" } });
export const waiting = (id: string, callIds: string[]) =>
  fact(id, { kind: "status_idle", reason: { kind: "waiting", callIds } });

/** The official client's whole pipeline (enforce, verify, apply) over a scripted event list. */
class ScriptedAgent extends AbstractAgent {
  constructor(
    private readonly events: AGUIEvent[],
    initialMessages: Message[],
  ) {
    super({ threadId: "thread-1", initialMessages });
  }

  run(): Observable<BaseEvent> {
    return from(this.events as BaseEvent[]);
  }
}

export async function judge(
  events: AGUIEvent[],
  initialMessages: Message[] = [],
): Promise<{ result: RunAgentResult; agent: AbstractAgent }> {
  const agent = new ScriptedAgent(events, initialMessages);
  const result = await agent.runAgent();
  return { result, agent };
}
