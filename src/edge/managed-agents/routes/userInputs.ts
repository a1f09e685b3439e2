import type { DomainInput } from "../../../coordinator/domainInputs.js";
import type { OutcomeRubric, ResultField } from "../../../coordinator/factVocabulary.js";
import { AwakenError } from "../../../kernel/errors.js";
import type { JsonObject } from "../../../kernel/json.js";

/** A wire event as the request schemas accept it: its type and its fields. */
type WireEvent = { type: string } & Record<string, unknown>;

/**
 * Managed Agents wire events → domain inputs. The request schemas have checked each event's shape;
 * what the product cannot take (a type it does not know, a rubric file it cannot read) is a 400
 * here, before anything is stored. Content blocks pass through as the client gave them.
 */
export function toDomainInputs(
  events: ReadonlyArray<{ type: string }>,
  /** File rubrics read for the batch, by event index (`outcomeRubrics.ts`). */
  rubricFiles: ReadonlyMap<number, OutcomeRubric> = new Map(),
): DomainInput[] {
  return events.map((event, index) =>
    event.type === "user.define_outcome"
      ? outcome(event as WireEvent, rubricFiles.get(index))
      : toDomainInput(event as WireEvent),
  );
}

function outcome(event: WireEvent, rubricFile: OutcomeRubric | undefined): DomainInput {
  const rubric = (event.rubric ?? {}) as Record<string, unknown>;
  if (rubric.type === "file" && !rubricFile) {
    throw new AwakenError("invalid_request", "rubric.file_id: the rubric file was not read");
  }
  return {
    kind: "define_outcome",
    description: String(event.description),
    rubric: rubricFile ?? { content: String(rubric.content) },
    maxIterations: typeof event.max_iterations === "number" ? event.max_iterations : null,
  };
}

function toDomainInput(event: WireEvent): DomainInput {
  switch (event.type) {
    case "user.message":
      return { kind: "message", content: blocks(event.content) };
    case "system.message":
      return { kind: "system_message", content: blocks(event.content) };
    case "user.interrupt":
      return typeof event.session_thread_id === "string"
        ? { kind: "interrupt", targetThread: event.session_thread_id }
        : { kind: "interrupt" };
    case "user.custom_tool_result":
      return toolResult(event, String(event.custom_tool_use_id), "client");
    case "user.tool_result":
      return toolResult(event, String(event.tool_use_id), "server");
    case "user.tool_confirmation":
      return {
        kind: "tool_confirmation",
        callId: String(event.tool_use_id),
        allowed: event.result === "allow",
        denyMessage: typeof event.deny_message === "string" ? event.deny_message : null,
      };
    default:
      throw new AwakenError("invalid_request", `unknown event type ${JSON.stringify(event.type)}`);
  }
}

/**
 * `content` and `is_error` are optional on the wire; a result that leaves them out is stored and
 * echoed without them, as the client sent it.
 */
function toolResult(event: WireEvent, callId: string, executor: "client" | "server"): DomainInput {
  const unset: ResultField[] = [];
  if (event.content === undefined || event.content === null) unset.push("content");
  if (event.is_error === undefined || event.is_error === null) unset.push("isError");
  return {
    kind: "tool_result",
    callId,
    content: blocks(event.content),
    isError: event.is_error === true,
    executor,
    ...(unset.length > 0 ? { unset } : {}),
  };
}

function blocks(value: unknown): JsonObject[] {
  return Array.isArray(value) ? (value as JsonObject[]) : [];
}
