/**
 * Sessions request schemas (wire §2.3; param types from `@anthropic-ai/sdk` resources/beta/sessions).
 */
import { z } from "zod";
import { AGENT_LIMITS, mcpServersSchema, modelSchema, skillsSchema, toolsSchema } from "./agents.js";
import {
  boundedString,
  createdAtRange,
  discriminatorError,
  metadataPatchSchema,
  metadataSchema,
  orderQuery,
  paginationQuery,
  queryArray,
  queryBoolean,
  queryInt,
  requiredString,
} from "./common.js";
import { userDefineOutcomeEventSchema, userMessageEventSchema } from "./events.js";

export const SESSION_LIMITS = {
  initialEvents: 50,
  title: 512,
  /** SDK `MemoryStoreResourceParam.instructions`: "Max 4096 chars". */
  memoryInstructions: 4096,
} as const;

const agentVersion = z.number().int().min(1);

/**
 * `agent`: an id string (latest version), `{type:"agent", id, version?}`, or
 * `{type:"agent_with_overrides", …}` whose provided fields replace the agent's for this session only.
 */
export const sessionAgentSchema = z.union(
  [
    requiredString,
    z.discriminatedUnion(
      "type",
      [
        z.strictObject({ type: z.literal("agent"), id: requiredString, version: agentVersion.optional() }),
        z.strictObject({
          type: z.literal("agent_with_overrides"),
          id: requiredString,
          version: agentVersion.optional(),
          model: modelSchema.optional(),
          system: boundedString(0, AGENT_LIMITS.system).nullish(),
          tools: toolsSchema.optional(),
          mcp_servers: mcpServersSchema.optional(),
          skills: skillsSchema.optional(),
        }),
      ],
      { error: discriminatorError("agent type") },
    ),
  ],
  { error: 'expected an agent id string or an object {"type": "agent"|"agent_with_overrides", "id": …}' },
);

/** Mounts (wire §2.3). Defaults such as the file mount path are the service's to fill in. */
export const sessionResourceSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({
      type: z.literal("github_repository"),
      url: z.url({ protocol: /^https?$/, error: "expected an http(s) repository URL" }),
      authorization_token: z.string().min(1).optional(),
      checkout: z
        .discriminatedUnion(
          "type",
          [
            z.strictObject({ type: z.literal("branch"), name: requiredString }),
            z.strictObject({ type: z.literal("commit"), sha: requiredString }),
          ],
          { error: discriminatorError("checkout type") },
        )
        .nullish(),
      mount_path: z.string().min(1).nullish(),
    }),
    z.strictObject({
      type: z.literal("file"),
      file_id: requiredString,
      mount_path: z.string().min(1).nullish(),
    }),
    z.strictObject({
      type: z.literal("memory_store"),
      memory_store_id: requiredString,
      access: z.enum(["read_write", "read_only"]).nullish(),
      instructions: boundedString(0, SESSION_LIMITS.memoryInstructions).nullish(),
    }),
  ],
  { error: discriminatorError("resource type") },
);

/**
 * SDK `BetaMonetaryAmount`: integer minor units as a decimal string with no leading zeros; USD only.
 * At most 15 digits (under $10 trillion): the amount is read as an exact integer, and a megabyte of
 * digits would only cost the server time.
 */
export const budgetSchema = z.strictObject({
  type: z.literal("limit"),
  max_list_cost: z.strictObject({
    amount: z
      .string()
      .max(15, { error: "expected at most 15 digits (minor currency units)" })
      .regex(/^(0|[1-9][0-9]*)$/, {
        error:
          'expected minor currency units as a decimal string without leading zeros, e.g. "2500" for $25.00',
      }),
    currency: z.literal("USD"),
  }),
});

const titleSchema = boundedString(0, SESSION_LIMITS.title);

/** POST /v1/sessions */
export const createSessionBodySchema = z.strictObject({
  agent: sessionAgentSchema,
  environment_id: requiredString,
  initial_events: z
    .array(
      z.discriminatedUnion("type", [userMessageEventSchema, userDefineOutcomeEventSchema], {
        error: discriminatorError("initial event type"),
      }),
    )
    .max(SESSION_LIMITS.initialEvents)
    .optional(),
  resources: z.array(sessionResourceSchema).optional(),
  vault_ids: z.array(requiredString).optional(),
  metadata: metadataSchema.optional(),
  title: titleSchema.nullish(),
  budget: budgetSchema.optional(),
});
export type CreateSessionBody = z.output<typeof createSessionBodySchema>;

/**
 * POST /v1/sessions/{id}. `vault_ids` is reserved ("requests setting this field are rejected"): the
 * schema accepts it so the service can refuse it with a message that says so, rather than
 * "unknown field". `budget: null` removes the budget; `agent` replaces tools and/or mcp_servers.
 */
export const updateSessionBodySchema = z.strictObject({
  title: titleSchema.nullish(),
  metadata: metadataPatchSchema.nullish(),
  budget: budgetSchema.nullish(),
  agent: z
    .strictObject({
      tools: toolsSchema.optional(),
      mcp_servers: mcpServersSchema.optional(),
    })
    .optional(),
  vault_ids: z.array(z.string()).optional(),
});
export type UpdateSessionBody = z.output<typeof updateSessionBodySchema>;

export const SESSION_STATUSES = ["idle", "running", "rescheduling", "terminated"] as const;

/** GET /v1/sessions (BidirectionalPageCursor; default order desc by created_at). */
export const listSessionsQuerySchema = z
  .strictObject({
    agent_id: requiredString.optional(),
    agent_version: queryInt(1).optional(),
    created_at: createdAtRange.optional(),
    deployment_id: requiredString.optional(),
    include_archived: queryBoolean.default(false),
    memory_store_id: requiredString.optional(),
    order: orderQuery("desc"),
    statuses: queryArray(
      z.enum(SESSION_STATUSES, {
        error: (issue) =>
          `unknown status ${JSON.stringify(issue.input)}; expected one of ${SESSION_STATUSES.map((s) => `"${s}"`).join(", ")}`,
      }),
    ).optional(),
    ...paginationQuery,
  })
  // SDK: agent_version "only applies when agent_id is also set"; alone it would silently match everything.
  .refine((q) => q.agent_version === undefined || q.agent_id !== undefined, {
    message: "requires agent_id; agent_version filters the versions of one agent",
    path: ["agent_version"],
  });
export type ListSessionsQuery = z.output<typeof listSessionsQuerySchema>;
