import type { RunAgentInput } from "@ag-ui/core";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { validateSessionName } from "../../coordinator/sessionEntryNames.js";
import { invalid } from "../../kernel/errors.js";

/** Bounds beyond the protocol's schema: a client string names a session and ends up in the store. */
export const RUN_INPUT_BOUNDS = {
  idLength: 256,
  messages: 10_000,
  tools: 256,
  context: 256,
  resume: 256,
} as const;

/**
 * Parses a request body as the protocol's `RunAgentInput` (the official schema) plus this server's
 * bounds. Throws a 400 naming the first offending field; nothing is written before this passes.
 */
export function parseRunInput(body: unknown): RunAgentInput {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join(".") : "body";
    throw invalid(`RunAgentInput.${where}: ${issue?.message ?? "invalid"}`);
  }
  const input = parsed.data as RunAgentInput;
  // A thread id names a session: the session entry's rule for client-chosen names.
  validateSessionName(input.threadId, "RunAgentInput.threadId");
  validateSessionName(input.runId, "RunAgentInput.runId");
  checkCount("messages", input.messages.length, RUN_INPUT_BOUNDS.messages);
  checkCount("tools", input.tools.length, RUN_INPUT_BOUNDS.tools);
  checkCount("context", input.context.length, RUN_INPUT_BOUNDS.context);
  checkCount("resume", input.resume?.length ?? 0, RUN_INPUT_BOUNDS.resume);
  input.messages.forEach((message, index) => {
    if (message.id.length === 0 || message.id.length > RUN_INPUT_BOUNDS.idLength) {
      throw invalid(`RunAgentInput.messages.${index}.id: must be 1-${RUN_INPUT_BOUNDS.idLength} characters`);
    }
  });
  return input;
}

function checkCount(field: string, count: number, max: number): void {
  if (count > max) throw invalid(`RunAgentInput.${field}: at most ${max} entries are accepted, got ${count}`);
}
