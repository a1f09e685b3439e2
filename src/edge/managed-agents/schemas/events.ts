/**
 * Session event request schemas (wire §2.4, §3.1-3.2; param types from `@anthropic-ai/sdk`
 * resources/beta/sessions/events).
 *
 * Stateful rules (is this tool use pending? is `user.tool_result` allowed in this environment?) belong
 * to the session service; this file checks what one request can show on its own.
 */
import { z } from "zod";
import {
  createdAtRange,
  discriminatorError,
  orderQuery,
  paginationQuery,
  queryArray,
  requiredString,
} from "./common.js";

export const EVENT_LIMITS = {
  /**
   * Events per `events.send`. The SDK states no maximum for send; 50 matches the documented cap on
   * `initial_events` (the other way to submit user events), so a batch accepted at create is accepted here.
   */
  eventsPerRequest: 50,
  /** One text block; keeps a single request (and a stored event) bounded. */
  textLength: 1_000_000,
  /** SDK `TextRubricParams.content`: "Maximum 262144 characters". */
  rubricLength: 262_144,
  /** SDK `user.define_outcome`: "Default 3, max 20". */
  maxIterations: 20,
} as const;

// ---------------------------------------------------------------------------------------------------
// Content blocks (wire §3.1)
// ---------------------------------------------------------------------------------------------------

/**
 * Text must be non-empty: the SDK's own tool runner substitutes "(no output)" for an empty tool result
 * rather than send `""`, because the model API rejects empty text blocks. Rejecting here turns a later
 * `session.error` into an immediate 400.
 */
export const textBlockSchema = z.strictObject({
  type: z.literal("text"),
  text: z
    .string()
    .min(1, { error: "must not be empty" })
    .max(EVENT_LIMITS.textLength, { error: `must be at most ${EVENT_LIMITS.textLength} characters` }),
});

/**
 * The SDK types `media_type` as an open string; these are the image types the model accepts, so others
 * are refused here rather than failing later as a `session.error`.
 */
const IMAGE_MEDIA_TYPES: readonly string[] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
const imageMediaType = z.string().refine((v) => IMAGE_MEDIA_TYPES.includes(v), {
  message: `expected one of ${IMAGE_MEDIA_TYPES.map((t) => JSON.stringify(t)).join(", ")}`,
});

const urlSource = z.strictObject({ type: z.literal("url"), url: z.url({ protocol: /^https?$/ }) });
const fileSource = z.strictObject({ type: z.literal("file"), file_id: requiredString });

const imageBlockSchema = z.strictObject({
  type: z.literal("image"),
  source: z.discriminatedUnion(
    "type",
    [
      z.strictObject({
        type: z.literal("base64"),
        media_type: imageMediaType,
        data: requiredString,
      }),
      urlSource,
      fileSource,
    ],
    { error: discriminatorError("image source type") },
  ),
});

const documentBlockSchema = z.strictObject({
  type: z.literal("document"),
  source: z.discriminatedUnion(
    "type",
    [
      z.strictObject({ type: z.literal("base64"), media_type: requiredString, data: requiredString }),
      z.strictObject({ type: z.literal("text"), media_type: z.literal("text/plain"), data: z.string() }),
      urlSource,
      fileSource,
    ],
    { error: discriminatorError("document source type") },
  ),
  title: z.string().nullish(),
  context: z.string().nullish(),
});

const searchResultBlockSchema = z.strictObject({
  type: z.literal("search_result"),
  source: requiredString,
  title: z.string(),
  content: z.array(textBlockSchema),
  citations: z.strictObject({ enabled: z.boolean() }),
});

const redactedBlockSchema = z.strictObject({ type: z.literal("redacted") });

/** `user.message` content: text | image | document | redacted (SDK `UserMessageEventParams`). */
const userContentBlockSchema = z.discriminatedUnion(
  "type",
  [textBlockSchema, imageBlockSchema, documentBlockSchema, redactedBlockSchema],
  { error: discriminatorError("content block type") },
);

/** ToolResultContent = text | image | document | search_result (wire §3.1). */
const toolResultBlockSchema = z.discriminatedUnion(
  "type",
  [textBlockSchema, imageBlockSchema, documentBlockSchema, searchResultBlockSchema],
  { error: discriminatorError("tool result content type") },
);
/** Optional, but when sent it carries at least one block (the SDK runner never sends `[]`). */
const toolResultContentSchema = z.array(toolResultBlockSchema).min(1);

// ---------------------------------------------------------------------------------------------------
// Event params (wire §3.2, C→S)
// ---------------------------------------------------------------------------------------------------

/** The SDK types `content` as an array only; a bare string is rejected with the shape to send. */
export const userMessageEventSchema = z.strictObject({
  type: z.literal("user.message"),
  content: z
    .array(userContentBlockSchema, {
      error: (issue) =>
        issue.code === "invalid_type" && issue.input !== undefined
          ? 'expected an array of content blocks, e.g. [{"type": "text", "text": "…"}]'
          : undefined,
    })
    .min(1, { error: "must contain at least one content block" }),
});

const userInterruptEventSchema = z.strictObject({
  type: z.literal("user.interrupt"),
  session_thread_id: z.string().min(1).nullish(),
});

const userToolConfirmationEventSchema = z
  .strictObject({
    type: z.literal("user.tool_confirmation"),
    tool_use_id: requiredString,
    result: z.enum(["allow", "deny"]),
    deny_message: z.string().nullish(),
  })
  .refine((e) => e.result === "deny" || e.deny_message === undefined || e.deny_message === null, {
    message: 'is only allowed when result is "deny"',
    path: ["deny_message"],
  });

const userCustomToolResultEventSchema = z.strictObject({
  type: z.literal("user.custom_tool_result"),
  custom_tool_use_id: requiredString,
  content: toolResultContentSchema.optional(),
  is_error: z.boolean().nullish(),
});

/** Only valid for self_hosted environments (wire §3.2); the session service enforces that. */
const userToolResultEventSchema = z.strictObject({
  type: z.literal("user.tool_result"),
  tool_use_id: requiredString,
  content: toolResultContentSchema.optional(),
  is_error: z.boolean().nullish(),
});

export const userDefineOutcomeEventSchema = z.strictObject({
  type: z.literal("user.define_outcome"),
  description: requiredString,
  rubric: z.discriminatedUnion(
    "type",
    [
      z.strictObject({ type: z.literal("text"), content: z.string().min(1).max(EVENT_LIMITS.rubricLength) }),
      z.strictObject({ type: z.literal("file"), file_id: requiredString }),
    ],
    { error: discriminatorError("rubric type") },
  ),
  max_iterations: z.number().int().min(1).max(EVENT_LIMITS.maxIterations).nullish(),
});

export const systemMessageEventSchema = z.strictObject({
  type: z.literal("system.message"),
  content: z.array(textBlockSchema).min(1),
});

export const EVENT_PARAM_TYPES = [
  "user.message",
  "user.interrupt",
  "user.tool_confirmation",
  "user.custom_tool_result",
  "user.tool_result",
  "user.define_outcome",
  "system.message",
] as const;

export const eventParamsSchema = z.discriminatedUnion(
  "type",
  [
    userMessageEventSchema,
    userInterruptEventSchema,
    userToolConfirmationEventSchema,
    userCustomToolResultEventSchema,
    userToolResultEventSchema,
    userDefineOutcomeEventSchema,
    systemMessageEventSchema,
  ],
  { error: discriminatorError("event type") },
);
export type EventParams = z.output<typeof eventParamsSchema>;

/** Events a `system.message` may accompany (SDK `SystemMessageEventParams`). */
const SYSTEM_MESSAGE_ANCHORS: readonly string[] = [
  "user.message",
  "user.tool_result",
  "user.custom_tool_result",
];

/**
 * Wire §3.2: at most one `system.message` per request; it must be the final event and immediately
 * follow the user.message / user.tool_result / user.custom_tool_result it accompanies.
 */
export function checkSystemMessagePlacement(
  events: readonly EventParams[],
  ctx: z.core.$RefinementCtx<EventParams[]>,
) {
  const positions = events.flatMap((event, index) => (event.type === "system.message" ? [index] : []));
  const [index, second] = positions;
  if (index === undefined) return;
  if (second !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: [second],
      message: "at most one system.message is allowed per request; put all its text blocks in one event",
    });
    return;
  }
  if (index !== events.length - 1) {
    ctx.addIssue({
      code: "custom",
      path: [index],
      message: "system.message must be the last event in the request",
    });
    return;
  }
  const previous = events[index - 1];
  if (!previous || !SYSTEM_MESSAGE_ANCHORS.includes(previous.type)) {
    ctx.addIssue({
      code: "custom",
      path: [index],
      message:
        "system.message must immediately follow the user.message, user.tool_result or " +
        "user.custom_tool_result it accompanies, in the same request",
    });
  }
}

/** POST /v1/sessions/{id}/events */
export const sendEventsBodySchema = z.strictObject({
  events: z
    .array(eventParamsSchema)
    .min(1, { error: "must contain at least one event" })
    .max(EVENT_LIMITS.eventsPerRequest)
    .superRefine(checkSystemMessagePlacement),
});
export type SendEventsBody = z.output<typeof sendEventsBodySchema>;

// ---------------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------------

/** Every stored event `type` (SDK `BetaManagedAgentsSessionEventType`), for `types[]` filters. */
export const SESSION_EVENT_TYPES = [
  "user.message",
  "user.interrupt",
  "user.tool_confirmation",
  "user.custom_tool_result",
  "user.tool_result",
  "user.define_outcome",
  "system.message",
  "agent.custom_tool_use",
  "agent.message",
  "agent.thinking",
  "agent.mcp_tool_use",
  "agent.mcp_tool_result",
  "agent.tool_use",
  "agent.tool_result",
  "agent.thread_message_received",
  "agent.thread_message_sent",
  "agent.thread_context_compacted",
  "session.error",
  "session.status_rescheduled",
  "session.status_running",
  "session.status_idle",
  "session.status_terminated",
  "session.thread_created",
  "session.thread_status_running",
  "session.thread_status_idle",
  "session.thread_status_terminated",
  "session.thread_status_rescheduled",
  "session.updated",
  "session.usage",
  "span.outcome_evaluation_start",
  "span.outcome_evaluation_ongoing",
  "span.outcome_evaluation_end",
  "span.model_request_start",
  "span.model_request_end",
  "workflow_run.created",
  "workflow_run.status_running",
  "workflow_run.status_idle",
  "workflow_run.status_ended",
  "workflow_run.error",
  "workflow_run.phase_started",
  "workflow_run.phase_ended",
] as const;
export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

function knownValue<const T extends readonly [string, ...string[]]>(values: T, noun: string) {
  return z.enum(values, {
    error: (issue) =>
      `unknown ${noun} ${JSON.stringify(issue.input)}; expected one of ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  });
}

/** GET /v1/sessions/{id}/events: `created_at[*]` compares against `processed_at`; default order asc. */
export const listEventsQuerySchema = z.strictObject({
  created_at: createdAtRange.optional(),
  order: orderQuery("asc"),
  types: queryArray(knownValue(SESSION_EVENT_TYPES, "event type")).optional(),
  ...paginationQuery,
});
export type ListEventsQuery = z.output<typeof listEventsQuerySchema>;

/** Delta previews exist only for these two types (wire §3.2). */
export const DELTA_EVENT_TYPES = ["agent.message", "agent.thinking"] as const;

/** GET /v1/sessions/{id}/events/stream */
export const streamEventsQuerySchema = z.strictObject({
  event_deltas: queryArray(knownValue(DELTA_EVENT_TYPES, "delta event type")).optional(),
});
export type StreamEventsQuery = z.output<typeof streamEventsQuerySchema>;
