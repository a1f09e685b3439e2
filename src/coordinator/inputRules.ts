import { AwakenError } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import type { AnswerKind, Fact } from "./facts.js";
import type { InputContext, InputPlan, RunEffect } from "./ports.js";

/** A user event as accepted by an edge, before it becomes a fact. */
export interface UserInput {
  type: string;
  body: JsonObject;
}

const IDLE_END_TURN: JsonObject = { stop_reason: { type: "end_turn" }, stop_details: null };

/**
 * Decides what a batch of user events does to the session, inside the ledger's transaction.
 * Pure: the same context and inputs always give the same plan, and a rejected batch throws before
 * anything is written, so a bad request changes nothing.
 */
export function planInputs(ctx: InputContext, inputs: readonly UserInput[], now: number): InputPlan {
  const { session, activeRun } = ctx;
  if (session.archivedAt !== null || session.status === "terminated") {
    throw new AwakenError(
      "session_terminated",
      `session ${session.id} is terminated and accepts no more events; create a new session to continue`,
    );
  }
  const facts: Fact[] = [];
  const effects: RunEffect[] = [];
  const echoIds: string[] = [];
  let pending = session.pending.map((p) => ({ ...p }));
  // The run's state as this batch sees it; "new" is a run this batch starts.
  let runState: string | null = activeRun?.state ?? null;
  let runIsNew = false;

  const push = (type: string, body: JsonObject): string => {
    const id = newId("sevt", now);
    facts.push({ id, type, body });
    return id;
  };
  const isPending = (id: unknown, kind: AnswerKind): id is string =>
    typeof id === "string" && pending.some((p) => p.eventId === id && p.kind === kind);
  /**
   * One answer landed. The parked run resumes once nothing is pending; a partial answer re-emits
   * the idle with the ids still waiting, so every client sees what is left.
   */
  const answered = (id: string | null) => {
    if (id !== null) pending = pending.filter((p) => p.eventId !== id);
    if (runState !== "awaiting") return;
    if (pending.length === 0) {
      effects.push({ kind: "resume" });
      runState = "queued";
      push("session.status_running", {});
    } else {
      push("session.status_idle", {
        stop_reason: { type: "requires_action", event_ids: [...new Set(pending.map((p) => p.eventId))] },
        stop_details: null,
      });
    }
  };

  for (const input of inputs) {
    switch (input.type) {
      case "user.message": {
        echoIds.push(push(input.type, input.body));
        if (runState === null) {
          effects.push({ kind: "start", runId: newId("run", now) });
          runState = "queued";
          runIsNew = true;
          push("session.status_running", {});
        }
        // Otherwise the message is queued input: the running turn (or the run once its pending
        // actions are answered) reads it from history.
        break;
      }
      case "user.custom_tool_result": {
        const target = input.body.custom_tool_use_id;
        if (!isPending(target, "custom_tool_result")) {
          throw new AwakenError(
            "tool_use_not_pending",
            `custom_tool_use_id ${JSON.stringify(target)} is not waiting for a result: it was already answered, ` +
              "interrupted, or is not an agent.custom_tool_use of this session",
          );
        }
        echoIds.push(push(input.type, input.body));
        answered(target);
        break;
      }
      case "user.interrupt": {
        echoIds.push(push(input.type, input.body));
        pending = [];
        if (runState !== null) {
          if (runIsNew) {
            // The run this batch started never reached the store: drop it instead of cancelling.
            const index = effects.findIndex((e) => e.kind === "start");
            if (index >= 0) effects.splice(index, 1);
          } else {
            effects.push({ kind: "cancel" });
            facts.push(...closeOpenRequest(ctx, now));
          }
          runState = null;
          runIsNew = false;
          push("session.status_idle", IDLE_END_TURN);
        }
        break;
      }
      case "system.message": {
        echoIds.push(push(input.type, input.body));
        break;
      }
      case "user.tool_result": {
        const target = input.body.tool_use_id;
        if (!isPending(target, "tool_result")) {
          throw new AwakenError(
            "tool_use_not_pending",
            `tool_use_id ${JSON.stringify(target)} is not waiting for a user.tool_result: only a built-in tool ` +
              "call of a self_hosted environment that is allowed and not yet answered takes one (answered, " +
              "interrupted, still awaiting its confirmation, or run by the server are not)",
          );
        }
        echoIds.push(push(input.type, input.body));
        answered(target);
        break;
      }
      case "user.tool_confirmation": {
        const target = input.body.tool_use_id;
        const asked = pending.find((p) => p.eventId === target && p.kind === "tool_confirmation");
        if (typeof target !== "string" || !asked) {
          throw new AwakenError(
            "tool_use_not_pending",
            `tool_use_id ${JSON.stringify(target)} is not waiting for a confirmation: it was already answered, ` +
              "interrupted, or its tool call did not ask",
          );
        }
        // Echoed into history and streams: the SDK's runner releases a held call only when it sees it.
        echoIds.push(push(input.type, input.body));
        // Cloud allow: the resumed run executes it. Self-hosted allow: the client's worker now owes the
        // result, in the call's place (idles list pending ids in call order).
        const owesResult = input.body.result === "allow" && asked.afterAllow === "tool_result";
        pending = owesResult
          ? pending.map((p) => (p === asked ? { eventId: target, kind: "tool_result" as const } : p))
          : pending.filter((p) => p !== asked);
        if (input.body.result !== "allow") {
          // Denied: the tool never runs; the model is told so by the server, nobody posts a result.
          const message = input.body.deny_message;
          const content = [
            {
              type: "text",
              text:
                typeof message === "string" && message.trim() !== ""
                  ? `The user denied this tool call: ${message}`
                  : "The user denied this tool call.",
            },
          ];
          if (asked.mcp) push("agent.mcp_tool_result", { mcp_tool_use_id: target, content, is_error: true });
          else push("agent.tool_result", { tool_use_id: target, content, is_error: true });
        }
        answered(null);
        break;
      }
      case "user.define_outcome": {
        throw new AwakenError("invalid_request", "user.define_outcome is not supported by this server yet");
      }
      default:
        throw new AwakenError("invalid_request", `unknown event type ${JSON.stringify(input.type)}`);
    }
  }
  return { facts, effects, echoIds };
}

/**
 * A cancelled worker can no longer commit, so the coordinator closes the model request it left open:
 * the preview it was streaming ends (wire §3.2) and the span does not dangle into the next turn.
 */
export function closeOpenRequest(ctx: InputContext, now: number): Fact[] {
  const open = ctx.openModelRequest;
  if (!open) return [];
  return [
    {
      id: newId("sevt", now),
      type: "span.model_request_end",
      body: {
        model_request_start_id: open.startId,
        is_error: true,
        provider: open.provider,
        model: open.model,
        model_usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    },
  ];
}

export { IDLE_END_TURN };
