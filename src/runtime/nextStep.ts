import { type CommittedFact, TOOL_AWAITS } from "../coordinator/facts.js";
import type { JsonObject } from "../kernel/json.js";
import { MODEL_ERROR_TYPES } from "./modelFacts.js";
import { TOOL_EXECUTION } from "./toolFacts.js";

export type Step =
  /** A model request was started and never ended (the worker died): close its span, then go on. */
  | { kind: "close_dangling_request"; startId: string }
  /**
   * A Hand tool use has no result yet: run it (attempt `attempts + 1`). `attempts > 0` means an
   * earlier owner started it and died before committing the result.
   */
  | {
      kind: "run_tool";
      toolUseId: string;
      name: string;
      input: JsonObject;
      attempts: number;
      /** Set for an MCP call (`agent.mcp_tool_use`): the server it goes to. */
      mcpServerName?: string;
    }
  /** Tool uses wait for client answers (results or confirmations): park the run. */
  | { kind: "await"; eventIds: string[] }
  /**
   * There is input the model has not answered yet. `failedAttempts` counts the model errors since
   * the last answer in this turn (an idle ends a turn; queued input does not reset the count).
   */
  | { kind: "call_model"; failedAttempts: number }
  /** Nothing left to do in this turn. */
  | { kind: "finish" };

interface HandCall {
  name: string;
  mcpServerName: string | null;
  input: JsonObject;
  attempts: number;
  waiting: "tool_confirmation" | "tool_result" | null;
  afterAllow: "server" | "tool_result";
}

const INPUT_TYPES = new Set(["user.message", "user.custom_tool_result", "system.message"]);

/**
 * Where a run stands, decided from committed facts only. This is what makes a run resumable by
 * any worker: no decision depends on memory that a crash would lose.
 */
export function nextStep(facts: readonly CommittedFact[]): Step {
  const startedAt = new Map<string, number>();
  let danglingStart: string | null = null;
  let lastAnsweredAt = -1;
  let lastInputAt = -1;
  let errorsSinceAnswer = 0;
  const pending: string[] = [];
  /**
   * Built-in tool uses without a result, in call order: the attempts their intents recorded, and
   * the client answer each still waits for (null: nothing, the server may run it).
   */
  const handCalls = new Map<string, HandCall>();
  /** Every tool use in call order, so a parked run lists what it waits for in that order. */
  const callOrder: string[] = [];

  for (const fact of facts) {
    switch (fact.type) {
      case "span.model_request_start":
        danglingStart = fact.id;
        startedAt.set(fact.id, fact.seq);
        break;
      case "span.model_request_end": {
        const startId = String(fact.body.model_request_start_id);
        if (danglingStart === startId) danglingStart = null;
        if (fact.body.is_error !== true) {
          // An answer covers the input committed before its request started; input that arrived
          // while the model was answering (committed before the end) still waits for a reply.
          lastAnsweredAt = Math.max(lastAnsweredAt, startedAt.get(startId) ?? fact.seq);
          errorsSinceAnswer = 0;
        }
        break;
      }
      case "session.error": {
        const error = isObject(fact.body.error) ? fact.body.error : {};
        if (MODEL_ERROR_TYPES.has(String(error.type))) errorsSinceAnswer += 1;
        break;
      }
      case "session.status_idle":
        // The turn ended (answered, parked, exhausted or interrupted): the next one starts fresh.
        errorsSinceAnswer = 0;
        break;
      case "agent.custom_tool_use":
        callOrder.push(fact.id);
        pending.push(fact.id);
        break;
      case "agent.tool_use":
      case "agent.mcp_tool_use":
        callOrder.push(fact.id);
        handCalls.set(fact.id, {
          name: String(fact.body.name),
          mcpServerName: fact.type === "agent.mcp_tool_use" ? String(fact.body.mcp_server_name) : null,
          input: isObject(fact.body.input) ? fact.body.input : {},
          attempts: 0,
          waiting: null,
          afterAllow: "server",
        });
        break;
      case TOOL_AWAITS: {
        const call = handCalls.get(String(fact.body.tool_use_id));
        if (!call) break;
        call.waiting = fact.body.answer === "tool_confirmation" ? "tool_confirmation" : "tool_result";
        call.afterAllow = fact.body.after_allow === "tool_result" ? "tool_result" : "server";
        break;
      }
      case "user.tool_confirmation": {
        const call = handCalls.get(String(fact.body.tool_use_id));
        if (call?.waiting !== "tool_confirmation") break;
        // Allowed: the server runs it, or the self-hosted client now owes its result. Denied: the
        // denial result committed with the confirmation closes the call.
        call.waiting =
          fact.body.result === "allow" && call.afterAllow === "tool_result" ? "tool_result" : null;
        break;
      }
      case TOOL_EXECUTION: {
        const call = handCalls.get(String(fact.body.tool_use_id));
        if (call) call.attempts = Math.max(call.attempts, Number(fact.body.attempt));
        break;
      }
      case "agent.tool_result":
      case "user.tool_result":
        handCalls.delete(String(fact.body.tool_use_id));
        lastInputAt = fact.seq;
        break;
      case "agent.mcp_tool_result":
        handCalls.delete(String(fact.body.mcp_tool_use_id));
        lastInputAt = fact.seq;
        break;
      case "user.custom_tool_result": {
        const index = pending.indexOf(String(fact.body.custom_tool_use_id));
        if (index >= 0) pending.splice(index, 1);
        lastInputAt = fact.seq;
        break;
      }
      case "user.interrupt":
        pending.length = 0;
        handCalls.clear();
        // An interrupt ends the turn: older input counts as handled.
        lastAnsweredAt = fact.seq;
        errorsSinceAnswer = 0;
        break;
      default:
        if (INPUT_TYPES.has(fact.type)) lastInputAt = fact.seq;
    }
  }
  if (danglingStart !== null) return { kind: "close_dangling_request", startId: danglingStart };
  for (const [toolUseId, call] of handCalls) {
    if (call.waiting === null) {
      return {
        kind: "run_tool",
        toolUseId,
        name: call.name,
        input: call.input,
        attempts: call.attempts,
        ...(call.mcpServerName === null ? {} : { mcpServerName: call.mcpServerName }),
      };
    }
  }
  const awaiting = callOrder.filter((id) => pending.includes(id) || handCalls.has(id));
  if (awaiting.length > 0) return { kind: "await", eventIds: awaiting };
  if (lastInputAt > lastAnsweredAt) return { kind: "call_model", failedAttempts: errorsSinceAnswer };
  return { kind: "finish" };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
