import type { OutcomeRubric } from "../../coordinator/factVocabulary.js";
import { AwakenError, invalid } from "../../kernel/errors.js";
import type { ManagedAgentsDeps } from "./edgeDeps.js";
import { EVENT_LIMITS } from "./schemas/events.js";

/** Reads a file rubric's text for the caller; a failure is the client's to fix (a 400). */
export type RubricFileReader = (fileId: string) => Promise<OutcomeRubric>;

/**
 * A file rubric is read once, when the outcome is accepted, so the grader (on any worker) reads the
 * text from history. The file must be one the caller uploaded to this workspace, unscoped or scoped
 * to this session, and UTF-8 text within the inline rubric's limit.
 */
export function rubricFileReader(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string | null,
): RubricFileReader {
  return async (fileId) => {
    const where = `rubric.file_id: file ${JSON.stringify(fileId)}`;
    let bytes: Buffer;
    try {
      const file = await deps.resources.files.download(workspaceId, fileId);
      if (file.record.scopeId !== null && file.record.scopeId !== sessionId) {
        throw invalid(`${where} is scoped to another session and cannot be used here`);
      }
      bytes = file.bytes;
    } catch (error) {
      if (!(error instanceof AwakenError) || error.code === "invalid_request") throw error;
      // Not found, expired, not downloadable: said as the rubric's problem, never a 404 of the send.
      throw invalid(`${where} cannot be used as a rubric: ${error.message}`);
    }
    let content: string;
    try {
      content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw invalid(`${where} is not UTF-8 text; a rubric file must hold plain text or markdown`);
    }
    if (content.trim() === "") throw invalid(`${where} is empty; a rubric must say how to grade`);
    if (content.length > EVENT_LIMITS.rubricLength) {
      throw invalid(`${where} holds more than ${EVENT_LIMITS.rubricLength} characters, the rubric limit`);
    }
    return { content, fileId };
  };
}

/** Reads the file rubrics of a batch's outcome definitions, by event index. */
export async function readRubricFiles(
  events: ReadonlyArray<{ type: string }>,
  read: RubricFileReader,
): Promise<Map<number, OutcomeRubric>> {
  const found = new Map<number, OutcomeRubric>();
  for (const [index, event] of events.entries()) {
    if (event.type !== "user.define_outcome") continue;
    const rubric = (event as { rubric?: { type?: string; file_id?: string } }).rubric;
    if (rubric?.type === "file") found.set(index, await read(String(rubric.file_id)));
  }
  return found;
}
