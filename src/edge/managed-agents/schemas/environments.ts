/**
 * Environments request schemas (wire §2.2; param types from `@anthropic-ai/sdk` resources/beta/environments).
 *
 * Config params default every field to null ("not set"), so nullable fields here mean "use the default"
 * on create and "keep the current value" on update; `resolveEnvironmentConfig` and
 * `applyEnvironmentConfigUpdate` give those nulls their meaning and check the cross-field rules.
 */
import { z } from "zod";
import { SANDBOX_PROVISIONING, SANDBOX_TIER_NAMES } from "../../../coordinator/environmentConfig.js";
import {
  boundedString,
  discriminatorError,
  metadataPatchSchema,
  metadataSchema,
  paginationQuery,
  queryBoolean,
} from "./common.js";

export const ENVIRONMENT_LIMITS = {
  name: 256,
  /** Not stated by the SDK; Awaken caps it like an agent description. */
  description: 2048,
  hostname: 253,
  /** Not stated by the SDK; generous caps that keep one config row bounded. */
  allowedHosts: 256,
  packagesPerManager: 256,
  packageSpec: 256,
} as const;

const hostList = z
  .array(z.string().min(1).max(ENVIRONMENT_LIMITS.hostname))
  .max(ENVIRONMENT_LIMITS.allowedHosts);
const packageList = z
  .array(z.string().min(1).max(ENVIRONMENT_LIMITS.packageSpec))
  .max(ENVIRONMENT_LIMITS.packagesPerManager);

const networkingSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("unrestricted") }),
    z.strictObject({
      type: z.literal("limited"),
      allowed_hosts: hostList.nullish(),
      allow_mcp_servers: z.boolean().nullish(),
      allow_package_managers: z.boolean().nullish(),
    }),
  ],
  { error: discriminatorError("networking type") },
);

const packagesSchema = z.strictObject({
  type: z.literal("packages").optional(),
  apt: packageList.nullish(),
  cargo: packageList.nullish(),
  gem: packageList.nullish(),
  go: packageList.nullish(),
  npm: packageList.nullish(),
  pip: packageList.nullish(),
});

export const environmentConfigSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({
      type: z.literal("cloud"),
      networking: networkingSchema.nullish(),
      packages: packagesSchema.nullish(),
      // Awaken extension: the Hand tools' isolation tier (see environmentConfig.ts).
      sandbox: z
        .strictObject({
          tier: z.enum(SANDBOX_TIER_NAMES).nullish(),
          provisioning: z.enum(SANDBOX_PROVISIONING).nullish(),
          // The container tier's image: shape and allow-list checked by the coordinator.
          image: z.string().max(255).nullish(),
        })
        .nullish(),
    }),
    z.strictObject({ type: z.literal("self_hosted") }),
  ],
  { error: discriminatorError("config type") },
);

const scopeSchema = z.enum(["organization", "account"]);
const descriptionSchema = boundedString(0, ENVIRONMENT_LIMITS.description);

/** POST /v1/environments */
export const createEnvironmentBodySchema = z.strictObject({
  name: boundedString(1, ENVIRONMENT_LIMITS.name),
  config: environmentConfigSchema.nullish(),
  description: descriptionSchema.nullish(),
  metadata: metadataSchema.optional(),
  scope: scopeSchema.nullish(),
});
export type CreateEnvironmentBody = z.output<typeof createEnvironmentBodySchema>;

/**
 * POST /v1/environments/{id}. SDK: `name: null` and `config: null` mean "not set" (keep);
 * `description: null` clears while `""` is stored as `""`; metadata values of `null` or `""` delete.
 */
export const updateEnvironmentBodySchema = z.strictObject({
  name: boundedString(1, ENVIRONMENT_LIMITS.name).nullish(),
  config: environmentConfigSchema.nullish(),
  description: descriptionSchema.nullish(),
  metadata: metadataPatchSchema.optional(),
  scope: scopeSchema.nullish(),
});
export type UpdateEnvironmentBody = z.output<typeof updateEnvironmentBodySchema>;

/** GET /v1/environments */
export const listEnvironmentsQuerySchema = z.strictObject({
  include_archived: queryBoolean.default(false),
  ...paginationQuery,
});
export type ListEnvironmentsQuery = z.output<typeof listEnvironmentsQuerySchema>;
