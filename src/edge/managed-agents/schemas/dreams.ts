/**
 * Dreams request schemas (param types from `@anthropic-ai/sdk` resources/beta/dreams). Ids are
 * bounded strings here; the service looks each up in the caller's workspace.
 */
import { z } from "zod";
import { DREAM_LIMITS } from "../../../dreams/dreamLimits.js";
import {
  boundedString,
  discriminatorError,
  paginationQuery,
  queryArray,
  queryBoolean,
  timestampSchema,
} from "./common.js";

const DREAM_STATUSES = ["pending", "running", "completed", "failed", "canceled"] as const;
const resourceId = boundedString(1, 128);

const memoryStoreInput = z.strictObject({ type: z.literal("memory_store"), memory_store_id: resourceId });
const sessionsInput = z.strictObject({
  type: z.literal("sessions"),
  // SDK: 1 to 100 ids, no duplicates.
  session_ids: z
    .array(resourceId)
    .min(1, { error: "give at least one session id" })
    .max(DREAM_LIMITS.maxSessions, { error: `give at most ${DREAM_LIMITS.maxSessions} session ids` })
    .refine((ids) => new Set(ids).size === ids.length, { error: "must not repeat a session id" }),
});
const dreamInput = z.discriminatedUnion("type", [memoryStoreInput, sessionsInput], {
  error: discriminatorError("input type"),
});

const modelId = boundedString(1, DREAM_LIMITS.maxModelIdChars);
const modelSchema = z.union([
  modelId,
  z.strictObject({
    id: modelId,
    // SDK: dreams accept only `standard`.
    speed: z.literal("standard", { error: 'dreams accept only "standard"' }).nullish(),
  }),
]);

const outputBehavior = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("create_new") }),
    z.strictObject({ type: z.literal("update_existing"), memory_store_id: resourceId }),
  ],
  { error: discriminatorError("output_behavior type") },
);

export const createDreamBodySchema = z
  .strictObject({
    inputs: z.array(dreamInput),
    model: modelSchema,
    instructions: boundedString(1, DREAM_LIMITS.maxInstructionsChars).nullish(),
    output_behavior: outputBehavior.optional(),
  })
  // SDK: exactly one `memory_store` entry and exactly one `sessions` entry.
  .refine(
    (body) =>
      body.inputs.filter((i) => i.type === "memory_store").length === 1 &&
      body.inputs.filter((i) => i.type === "sessions").length === 1,
    { error: "give exactly one memory_store entry and exactly one sessions entry", path: ["inputs"] },
  );
export type CreateDreamBody = z.output<typeof createDreamBodySchema>;

export const listDreamsQuerySchema = z.strictObject({
  created_at: z.strictObject({ gt: timestampSchema.optional(), lt: timestampSchema.optional() }).optional(),
  include_archived: queryBoolean.default(false),
  statuses: queryArray(
    z.enum(DREAM_STATUSES, {
      error: (issue) =>
        `unknown status ${JSON.stringify(issue.input)}; expected one of ${DREAM_STATUSES.map((s) => `"${s}"`).join(", ")}`,
    }),
  ).optional(),
  ...paginationQuery,
});
