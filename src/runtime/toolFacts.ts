import { toolExecutionFact } from "../coordinator/factCodec.js";

export { TOOL_EXECUTION } from "../coordinator/factCodec.js";

import type { TypedFact } from "../coordinator/factVocabulary.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";

/** Committed right before a Hand or MCP tool runs: the call's intent (see `TOOL_EXECUTION`). */
export function toolExecution(now: number, toolUseId: string, attempt: number): TypedFact {
  return toolExecutionFact(newId("sevt", now), toolUseId, attempt);
}

/** The server's result for one of its built-in calls (run, denied, or cut off). */
export function toolResult(now: number, toolUseId: string, text: string, isError: boolean): TypedFact {
  return {
    id: newId("sevt", now),
    kind: "tool_result",
    callId: toolUseId,
    executor: "server",
    by: "server",
    content: [{ type: "text", text }],
    isError,
  };
}

/** The result of an MCP call, content as the server gave it. */
export function mcpToolResult(
  now: number,
  mcpToolUseId: string,
  content: JsonObject[],
  isError: boolean,
): TypedFact {
  return {
    id: newId("sevt", now),
    kind: "tool_result",
    callId: mcpToolUseId,
    executor: "mcp",
    by: "server",
    content,
    isError,
  };
}

/** What the model is told when a call that is not safe to repeat was cut off by a crash. */
export function indeterminateText(name: string): string {
  return (
    `The ${name} call was interrupted: the worker running it stopped before it reported a result. ` +
    `It is not safe to repeat, so it was not run again, and whether it took effect is unknown. ` +
    `Check its effects before running it again.`
  );
}

/**
 * The session's sandbox was realized for the first time: which tier, under which provisioning, how
 * long it took, and the frozen package resolution its packages came from. Internal; one per session. Sandbox start-up latency, apart from the tools' own.
 */
export const SANDBOX_REALIZED = "awaken.sandbox_realized";

export function sandboxRealized(
  now: number,
  tier: string,
  provisioning: string,
  realizeMs: number,
  /** The frozen package resolution the sandbox's packages were installed from, when there is one. */
  packageResolutionId?: string,
  /** The derived image (`host/repo@sha256:…`) the sandbox ran, when the revision's build was ready. */
  builtImage?: string,
): TypedFact {
  return {
    id: newId("sevt", now),
    kind: "internal",
    type: SANDBOX_REALIZED,
    body: {
      tier,
      provisioning,
      realize_ms: realizeMs,
      ...(packageResolutionId === undefined ? {} : { package_resolution_id: packageResolutionId }),
      ...(builtImage === undefined ? {} : { image: builtImage, image_digest: builtImage.split("@")[1] }),
    },
  };
}

/**
 * What this run realized of the session's resources and the agent's skills: each resource's type,
 * id and mount path (a file's digest and size, a store's access), each skill's exact version, and
 * how they were offered (`mounted` in the sandbox, or as runtime `tools`), under the run's id.
 * Internal; one per run that has any (a run re-activated after a lost claim may record another). Secret-free: never a token, never content.
 */
export const RESOURCES_REALIZED = "awaken.resources_realized";

export function resourcesRealized(now: number, body: JsonObject): TypedFact {
  return { id: newId("sevt", now), kind: "internal", type: RESOURCES_REALIZED, body };
}

/**
 * The outcomes of one memory write-back (paths, memory and version ids, the reason of a conflict
 * or refusal), under the run's id. Internal; never content. `notes` are what the agent must be told (changes that did
 * not take): said in the tool result committed with it, or, for a write-back outside a tool step
 * (before a model request, at a turn's end), by the conversation in the model's next request.
 */
export const MEMORY_WRITTEN_BACK = "awaken.memory_written_back";

export function memoryWrittenBack(
  now: number,
  outcomes: JsonObject[],
  notes: string[],
  toldIn: "tool_result" | "next_request",
  runId: string,
): TypedFact {
  return {
    id: newId("sevt", now),
    kind: "internal",
    type: MEMORY_WRITTEN_BACK,
    body: { run_id: runId, outcomes, notes, told_in: toldIn },
  };
}
