import type { Fact } from "../facts.js";
import type { OutcomeVerdict, TypedFact } from "../factVocabulary.js";
import { count, defined, object, text } from "./bodyValues.js";
import { STORED_TYPE } from "./storedTypes.js";
import { decodeUsage, encodeSpanUsage } from "./usageCodec.js";

type Of<K extends TypedFact["kind"]> = Extract<TypedFact, { kind: K }>;
export type OutcomeFact = Of<
  "outcome_defined" | "outcome_evaluation_start" | "outcome_evaluation_ongoing" | "outcome_evaluation_end"
>;

/** The file a rubric was read from: the product's own key, no wire field carries it. */
const RUBRIC_FILE_ID = "awaken_rubric_file_id";
/** The grader's model, which prices its usage in the session's list cost; no wire field carries it. */
const GRADER_MODEL = "awaken_grader_model";

const VERDICTS: readonly string[] = [
  "satisfied",
  "needs_revision",
  "max_iterations_reached",
  "failed",
  "interrupted",
] satisfies OutcomeVerdict[];

export const outcomeDecoders: Record<string, (f: Fact) => OutcomeFact> = {
  [STORED_TYPE.outcome_defined]: ({ id, body }) => {
    const fileId = body[RUBRIC_FILE_ID];
    return {
      id,
      kind: "outcome_defined",
      outcomeId: text(body.outcome_id),
      description: text(body.description),
      rubric: {
        content: text(object(body.rubric).content),
        ...(typeof fileId === "string" ? { fileId } : {}),
      },
      maxIterations: typeof body.max_iterations === "number" ? body.max_iterations : null,
    };
  },
  [STORED_TYPE.outcome_evaluation_start]: ({ id, body }) => ({
    id,
    kind: "outcome_evaluation_start",
    outcomeId: text(body.outcome_id),
    iteration: count(body.iteration),
  }),
  [STORED_TYPE.outcome_evaluation_ongoing]: ({ id, body }) => ({
    id,
    kind: "outcome_evaluation_ongoing",
    outcomeId: text(body.outcome_id),
    iteration: count(body.iteration),
  }),
  [STORED_TYPE.outcome_evaluation_end]: ({ id, body }) => {
    const result = text(body.result);
    return {
      id,
      kind: "outcome_evaluation_end",
      outcomeId: text(body.outcome_id),
      startId: text(body.outcome_evaluation_start_id),
      iteration: count(body.iteration),
      // A verdict this build does not know reads as a failure: it ends the outcome either way.
      result: (VERDICTS.includes(result) ? result : "failed") as OutcomeVerdict,
      explanation: text(body.explanation),
      model: typeof body[GRADER_MODEL] === "string" ? body[GRADER_MODEL] : null,
      usage: decodeUsage(body.usage),
    };
  },
};

export function encodeOutcome(f: OutcomeFact): Fact {
  const type = STORED_TYPE[f.kind];
  switch (f.kind) {
    case "outcome_defined":
      return {
        id: f.id,
        type,
        body: defined({
          outcome_id: f.outcomeId,
          description: f.description,
          rubric: { type: "text", content: f.rubric.content },
          max_iterations: f.maxIterations,
          [RUBRIC_FILE_ID]: f.rubric.fileId,
        }),
      };
    case "outcome_evaluation_start":
    case "outcome_evaluation_ongoing":
      return { id: f.id, type, body: { outcome_id: f.outcomeId, iteration: f.iteration } };
    case "outcome_evaluation_end":
      return {
        id: f.id,
        type,
        body: {
          outcome_id: f.outcomeId,
          outcome_evaluation_start_id: f.startId,
          iteration: f.iteration,
          result: f.result,
          explanation: f.explanation,
          usage: encodeSpanUsage(f.usage),
          ...(f.model !== null ? { [GRADER_MODEL]: f.model } : {}),
        },
      };
  }
}
