/**
 * Deployments and deployment runs request schemas (param types from `@anthropic-ai/sdk`
 * resources/beta/deployments and deployment-runs). The cron expression and time zone are checked
 * by the Deployment context (`deployments/cronSchedule.ts`): one rule for every way in.
 */
import { z } from "zod";
import {
  boundedString,
  createdAtInclusiveRange,
  createdAtRange,
  discriminatorError,
  metadataPatchSchema,
  metadataSchema,
  paginationQuery,
  queryBoolean,
  requiredString,
} from "./common.js";
import {
  checkSystemMessagePlacement,
  type EventParams,
  systemMessageEventSchema,
  userDefineOutcomeEventSchema,
  userMessageEventSchema,
} from "./events.js";
import { budgetSchema, sessionResourceSchema } from "./sessions.js";

export const DEPLOYMENT_LIMITS = {
  name: 256,
  description: 2048,
  initialEvents: 50,
  resources: 500,
  vaultIds: 50,
  expression: 256,
  timezone: 64,
} as const;

/** `agent`: an id string (pins the latest version) or `{type: "agent", id, version}`. */
const deploymentAgentSchema = z.union(
  [
    requiredString,
    z.strictObject({
      type: z.literal("agent"),
      id: requiredString,
      version: z.number().int().min(1).optional(),
    }),
  ],
  { error: 'expected an agent id string or an object {"type": "agent", "id": …, "version": …}' },
);

const initialEventsSchema = z
  .array(
    z.discriminatedUnion(
      "type",
      [userMessageEventSchema, userDefineOutcomeEventSchema, systemMessageEventSchema],
      {
        error: discriminatorError("initial event type (user.message, user.define_outcome or system.message)"),
      },
    ),
  )
  .min(1, { error: "must contain at least one event" })
  .max(DEPLOYMENT_LIMITS.initialEvents)
  .superRefine((events, ctx) =>
    checkSystemMessagePlacement(
      events as EventParams[],
      ctx as unknown as z.core.$RefinementCtx<EventParams[]>,
    ),
  );

/** A GitHub token would be stored with every deployment: refused until it is sealed like a session's. */
const resourcesSchema = z
  .array(sessionResourceSchema)
  .max(DEPLOYMENT_LIMITS.resources)
  .superRefine((resources, ctx) => {
    resources.forEach((resource, index) => {
      if (resource.type === "github_repository" && resource.authorization_token !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [index, "authorization_token"],
          message:
            "repository tokens are not stored with deployments; use a public repository or a vault credential",
        });
    });
  });

const scheduleSchema = z.strictObject({
  type: z.literal("cron"),
  expression: boundedString(1, DEPLOYMENT_LIMITS.expression),
  timezone: boundedString(1, DEPLOYMENT_LIMITS.timezone),
});

const vaultIdsSchema = z.array(requiredString).max(DEPLOYMENT_LIMITS.vaultIds);
const nameSchema = boundedString(1, DEPLOYMENT_LIMITS.name).refine((name) => name.trim().length > 0, {
  error: "must not be empty",
});
const descriptionSchema = boundedString(0, DEPLOYMENT_LIMITS.description);

/** POST /v1/deployments */
export const createDeploymentBodySchema = z.strictObject({
  agent: deploymentAgentSchema,
  environment_id: requiredString,
  initial_events: initialEventsSchema,
  name: nameSchema,
  budget: budgetSchema.nullish(),
  description: descriptionSchema.nullish(),
  metadata: metadataSchema.optional(),
  resources: resourcesSchema.optional(),
  schedule: scheduleSchema.nullish(),
  vault_ids: vaultIdsSchema.optional(),
});
export type CreateDeploymentBody = z.output<typeof createDeploymentBodySchema>;

/** POST /v1/deployments/{id}: each field omitted is kept; null clears what may be cleared. */
export const updateDeploymentBodySchema = z.strictObject({
  agent: deploymentAgentSchema.optional(),
  budget: budgetSchema.nullish(),
  description: descriptionSchema.nullish(),
  environment_id: requiredString.optional(),
  initial_events: initialEventsSchema.optional(),
  metadata: metadataPatchSchema.nullish(),
  name: nameSchema.optional(),
  resources: resourcesSchema.nullish(),
  schedule: scheduleSchema.nullish(),
  vault_ids: vaultIdsSchema.nullish(),
});
export type UpdateDeploymentBody = z.output<typeof updateDeploymentBodySchema>;

export const DEPLOYMENT_STATUSES = ["active", "paused"] as const;

/** GET /v1/deployments. SDK: `status` and `include_archived` cannot be combined. */
export const listDeploymentsQuerySchema = z
  .strictObject({
    agent_id: requiredString.optional(),
    created_at: createdAtInclusiveRange.optional(),
    include_archived: queryBoolean.optional(),
    status: z.enum(DEPLOYMENT_STATUSES).optional(),
    ...paginationQuery,
  })
  .refine((q) => !(q.status !== undefined && q.include_archived === true), {
    message: "status cannot be combined with include_archived=true",
    path: ["status"],
  });

/** GET /v1/deployment_runs */
export const listDeploymentRunsQuerySchema = z.strictObject({
  created_at: createdAtRange.optional(),
  deployment_id: requiredString.optional(),
  has_error: queryBoolean.optional(),
  trigger_type: z.enum(["schedule", "manual"]).optional(),
  ...paginationQuery,
});
