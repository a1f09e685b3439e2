import { toolAwaitsFact } from "../coordinator/factCodec.js";
import type { FactPayload, IdleReason, RetryStatus, TypedFact } from "../coordinator/factVocabulary.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import type { ModelResponse, ModelUsage, ProviderError } from "../providers/ports.js";
import { evaluatePermission } from "./permissionGate.js";
import type { CatalogEntry } from "./toolCatalog.js";
import { mcpToolResult, toolResult } from "./toolFacts.js";

export interface ModelSpan {
  startId: string;
  provider: string;
  model: string;
}

/** A new fact with a fresh id. */
export function newFact(now: number, payload: FactPayload): TypedFact {
  return { id: newId("sevt", now), ...payload };
}

/**
 * The span's start. `committedLate` carries what the request saw and when it began, for a start
 * committed with the request's answer instead of before the request.
 */
export function spanStart(
  span: ModelSpan,
  committedLate?: { contextSeq: number; startedAt: number },
): TypedFact {
  return {
    id: span.startId,
    kind: "model_request_start",
    provider: span.provider,
    model: span.model,
    ...committedLate,
  };
}

export function spanEnd(span: ModelSpan, now: number, usage: ModelUsage | null, isError: boolean): TypedFact {
  return newFact(now, {
    kind: "model_request_end",
    startId: span.startId,
    isError,
    provider: span.provider,
    model: span.model,
    usage: {
      inputTokens: usage?.inputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
      cacheReadInputTokens: usage?.cacheReadInputTokens ?? 0,
      cacheCreationInputTokens: usage?.cacheCreationInputTokens ?? 0,
    },
  });
}

/** What a model answer asks for next, besides its facts. */
export interface ResponsePlan {
  facts: TypedFact[];
  /** Tool uses the server runs next (allowed built-in tools of a cloud environment). */
  serverRuns: number;
  /** Calls the gate denied: their error results are already among the facts. */
  denied: number;
  /** Ids a client must answer (custom results, confirmations, self-hosted results), in call order. */
  awaiting: string[];
}

/**
 * The facts a successful model response becomes: its text as one message, each tool use on its own.
 * A built-in tool use is a server call with the permission gate's decision (wire §3.4): denied
 * calls get their error result at once, calls waiting for a client get a `TOOL_AWAITS` fact in the
 * same commit. Anything else is a client call (a custom tool), the client's to answer.
 * `toolIds` maps a tool use's position among the answer's tool uses to the id its live preview
 * announced; calls without one get a fresh id.
 */
export function responseFacts(
  response: ModelResponse,
  messageId: string,
  now: number,
  catalog: ReadonlyMap<string, CatalogEntry>,
  toolIds: ReadonlyMap<number, string> = new Map(),
): ResponsePlan {
  const plan: ResponsePlan = { facts: [], serverRuns: 0, denied: 0, awaiting: [] };
  const { facts } = plan;
  const text = response.content.filter((b) => b.type === "text" && b.text !== "");
  if (text.length > 0) {
    facts.push({
      id: messageId,
      kind: "agent_message",
      content: text.map((b) => ({ ...b })) as JsonObject[],
    });
  }
  let toolUse = 0;
  for (const block of response.content) {
    if (block.type !== "tool_use") continue;
    const id = toolIds.get(toolUse++) ?? newId("sevt", now);
    const input = block.input as JsonObject;
    const entry = catalog.get(block.name);
    if (entry?.kind === "mcp") {
      // Server-executed through the same gate (wire §3.4 case 6); a confirmation resumes on the server.
      const decision = evaluatePermission(entry.policy, entry.tool, input);
      facts.push({
        id,
        kind: "tool_call",
        call: {
          id,
          name: entry.tool,
          input,
          executor: "mcp",
          mcpServer: entry.server,
          permission: { decision: decision.permission, evaluation: decision.evaluation },
        },
      });
      if (decision.permission === "deny") {
        plan.denied += 1;
        facts.push(
          mcpToolResult(
            now,
            id,
            [{ type: "text", text: `This call was denied and did not run: ${decision.reason}.` }],
            true,
          ),
        );
      } else if (decision.permission === "ask") {
        plan.awaiting.push(id);
        facts.push(toolAwaitsFact(newId("sevt", now), id, "confirmation", "server", true));
      } else {
        plan.serverRuns += 1;
      }
      continue;
    }
    if (entry?.kind !== "hand" && entry?.kind !== "runtime") {
      plan.awaiting.push(id);
      facts.push({ id, kind: "tool_call", call: { id, name: block.name, input, executor: "client" } });
      continue;
    }
    const decision = evaluatePermission(entry.policy, block.name, input);
    facts.push({
      id,
      kind: "tool_call",
      call: {
        id,
        name: block.name,
        input,
        executor: "server",
        permission: { decision: decision.permission, evaluation: decision.evaluation },
      },
    });
    if (decision.permission === "deny") {
      plan.denied += 1;
      facts.push(toolResult(now, id, `This call was denied and did not run: ${decision.reason}.`, true));
    } else if (decision.permission === "ask") {
      plan.awaiting.push(id);
      facts.push(
        toolAwaitsFact(
          newId("sevt", now),
          id,
          "confirmation",
          entry.runsOn === "client" ? "client" : "server",
        ),
      );
    } else if (entry.runsOn === "client") {
      plan.awaiting.push(id);
      facts.push(toolAwaitsFact(newId("sevt", now), id, "server_tool_result"));
    } else {
      plan.serverRuns += 1;
    }
  }
  return plan;
}

/**
 * The `session.error` types a failed model request commits (`providerErrorType`). Only these count
 * toward the model's retry budget: an error about a tool's reach or credentials (MCP, egress) says
 * nothing about whether the next model request will succeed.
 */
export const MODEL_ERROR_TYPES: ReadonlySet<string> = new Set([
  "model_overloaded_error",
  "model_rate_limited_error",
  "model_request_failed_error",
  "unknown_error",
  // An ACP harness Brain that exited or failed its prompt: retried within the same budget.
  "acp_harness_failed_error",
]);

export function providerErrorType(error: ProviderError | null): string {
  if (!error) return "unknown_error";
  if (error.kind === "overloaded") return "model_overloaded_error";
  if (error.kind === "rate_limited") return "model_rate_limited_error";
  return "model_request_failed_error";
}

export function sessionError(
  now: number,
  type: string,
  message: string,
  retryStatus: RetryStatus,
  /** Type-specific fields (e.g. the MCP server's name). */
  extra: JsonObject = {},
): TypedFact {
  return newFact(now, { kind: "error", errorType: type, message, retryStatus, extra });
}

export function idle(now: number, reason: IdleReason): TypedFact {
  return newFact(now, { kind: "status_idle", reason });
}
