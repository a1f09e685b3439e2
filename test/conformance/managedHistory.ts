/**
 * The Managed Agents events list read the scenario's way: a session's turns, and the current
 * turn's view (how it ended, its calls, its last text). The Managed driver shows its client's
 * events through it, and every scenario step judges the committed history with it.
 */
import { textOf, type WireEvent } from "../support/sdkHelpers.js";
import type { HistoryTurn, ToolCallState, ToolCallView, TurnEnd, TurnView } from "./protocolDriver.js";

const CALL_TYPES = new Set(["agent.tool_use", "agent.custom_tool_use", "agent.mcp_tool_use"]);

/** The call a result or confirmation answers, by each event type's own field. */
export function answeredCallId(event: WireEvent): string | undefined {
  switch (event.type) {
    case "agent.tool_result":
      return event.tool_use_id as string;
    case "agent.mcp_tool_result":
      return event.mcp_tool_use_id as string;
    case "user.custom_tool_result":
      return event.custom_tool_use_id as string;
    default:
      return undefined;
  }
}

const isIdle = (e: WireEvent) => e.type === "session.status_idle";
const stopOf = (e: WireEvent) => (e.stop_reason ?? {}) as { type?: string; event_ids?: string[] };

/** The events of the last turn: from the last user message on (the whole list before any). */
export function lastTurn(events: readonly WireEvent[]): WireEvent[] {
  const start = events.findLastIndex((e) => e.type === "user.message");
  return events.slice(Math.max(0, start));
}

/** How the turn's last response ended; null while it has not come to rest. */
export function endOf(turn: readonly WireEvent[]): TurnEnd | null {
  const last = turn.findLastIndex(isIdle);
  if (last === -1 || last !== turn.length - 1) return null;
  const previous = turn.slice(0, last).findLastIndex(isIdle);
  const response = turn.slice(previous + 1, last);
  switch (stopOf(turn[last] as WireEvent).type) {
    case "requires_action":
      return "waiting";
    case "retries_exhausted":
      return "error";
    case "end_turn":
      return response.some((e) => e.type === "user.interrupt") ? "interrupted" : "natural";
    default:
      throw new Error(`unexpected stop reason ${JSON.stringify(turn[last]?.stop_reason)}`);
  }
}

/** The current turn as a Managed client sees it in `events` (what it streamed or listed). */
export function managedView(events: readonly WireEvent[]): TurnView {
  const turn = lastTurn(events);
  const end = endOf(turn);
  if (end === null) throw new Error(`the turn has not ended: ${turn.map((e) => e.type).join(", ")}`);
  const idle = turn.at(-1) as WireEvent;
  const waitingOn = new Set(stopOf(idle).type === "requires_action" ? (stopOf(idle).event_ids ?? []) : []);
  const answered = new Set(turn.flatMap((e) => answeredCallId(e) ?? []));
  const denied = new Set(
    turn.flatMap((e) =>
      e.type === "user.tool_confirmation" && e.result === "deny" ? [e.tool_use_id as string] : [],
    ),
  );
  const toolCalls: ToolCallView[] = turn
    .filter((e) => CALL_TYPES.has(e.type))
    .map((e) => {
      let state: ToolCallState = "incomplete";
      if (denied.has(e.id)) state = "denied";
      else if (answered.has(e.id)) state = "done";
      else if (waitingOn.has(e.id))
        state = e.type === "agent.custom_tool_use" ? "awaiting_result" : "awaiting_approval";
      return { id: e.id, name: e.name as string, state };
    });
  const texts = turn.filter((e) => e.type === "agent.message").map((e) => textOf(e));
  const error = turn.findLast((e) => e.type === "session.error")?.error as { message?: string } | undefined;
  return {
    end,
    text: texts.filter((t) => t !== "").at(-1) ?? "",
    toolCalls,
    ...(end === "error" ? { error: error?.message ?? "" } : {}),
  };
}

/** Every turn of the list, as `HistoryTurn`s. */
export function managedTurns(events: readonly WireEvent[]): HistoryTurn[] {
  const turns: HistoryTurn[] = [];
  const answered = new Set(events.flatMap((e) => answeredCallId(e) ?? []));
  for (const event of events) {
    if (event.type === "user.message") {
      turns.push({ user: textOf(event), texts: [], toolCalls: [] });
      continue;
    }
    const turn = turns.at(-1);
    if (!turn) continue;
    if (event.type === "agent.message" && textOf(event) !== "") turn.texts.push(textOf(event));
    if (CALL_TYPES.has(event.type)) {
      turn.toolCalls.push({ id: event.id, name: event.name as string, answered: answered.has(event.id) });
    }
  }
  return turns;
}
