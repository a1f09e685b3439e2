/**
 * User profile request schemas (param types from `@anthropic-ai/sdk` resources/user-profiles and
 * resources/beta/user-profiles). Which body fields a request may send depends on its
 * `user-profiles-…` beta header, as the SDK's doc comments state (`userProfileWire.ts`).
 */
import { z } from "zod";
import type { UserProfileWire } from "../userProfileWire.js";
import {
  boundedString,
  discriminatorError,
  metadataSchema,
  orderQuery,
  paginationQuery,
  queryArray,
  timestampSchema,
} from "./common.js";

const accessType = z.enum(["application", "passthrough"]);
const profileName = boundedString(1, 255);
/** The platform's opaque strings (hashes, references): 1 to 255 characters (SDK). */
const opaque = boundedString(1, 255);
const country = z
  .string({ error: "expected an ISO 3166-1 alpha-2 code in upper case, such as US" })
  .regex(/^[A-Z]{2}$/, { error: "expected an ISO 3166-1 alpha-2 code in upper case, such as US" });
const accountStatus = z.enum(["active", "suspended", "blocked"]);
const entityType = z.enum(["individual", "business", "non_profit", "government"]);

/** On create a field may be null (not supplied); on update null is refused (a value cannot be cleared). */
function detailsSchema(nullable: boolean) {
  const maybe = <T extends z.ZodType>(s: T) => (nullable ? s.nullable().optional() : s.optional());
  return z.strictObject({
    account_status: maybe(accountStatus),
    country: maybe(country),
    email_hash: maybe(opaque),
    entity_type: maybe(entityType),
    name_hash: maybe(opaque),
    onboarded_at: timestampSchema.optional(),
    reference_id: maybe(opaque),
  });
}

/** Values must be non-empty on create (SDK); on update "" removes the key. */
const createMetadata = metadataSchema.superRefine((value, ctx) => {
  for (const [key, entry] of Object.entries(value ?? {})) {
    if (entry === "")
      ctx.addIssue({ code: "custom", message: "values must be non-empty strings", path: [key] });
  }
});

/** The body of create (and update: `forUpdate`) as this request's beta header allows it. */
export function userProfileBodySchema(wire: UserProfileWire, forUpdate: boolean) {
  const common = {
    access_type: forUpdate ? accessType.nullish() : accessType.optional(),
    metadata: forUpdate ? metadataSchema.optional() : createMetadata.optional(),
    name: profileName.nullish(),
  };
  if (wire === "2026-03-24") return z.strictObject({ ...common, external_id: opaque.nullish() });
  if (wire === "2026-08-18")
    return z.strictObject({
      ...common,
      external_id: opaque.nullish(),
      external_user_onboarded_at: timestampSchema.optional(),
    });
  return z.strictObject({ ...common, external_user_details: detailsSchema(!forUpdate).optional() });
}

export const userProfileListQuerySchema = z.strictObject({
  ...paginationQuery,
  order: orderQuery("desc"),
  order_by: z.enum(["created_at", "name"]).default("created_at"),
  enforcement_status: queryArray(z.enum(["unrestricted", "pending", "restricted", "banned"])).optional(),
});

export const actionUrlBodySchema = z.strictObject({
  action: z.discriminatedUnion("type", [z.strictObject({ type: z.literal("enroll_end_user") })], {
    error: discriminatorError("action type"),
  }),
});

/** An empty body: the enrollment URL takes no parameters. */
export const emptyBodySchema = z.strictObject({});

// Google data controls (recorded only): the shapes and strings are checked as the SDK states them.
const MAX_REGIONS = 16;
const region = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, { error: "expected a region code such as us or eu" });
const externalKeyId = z
  .string({ error: "expected an External Key id (ekey_…)" })
  .regex(/^ekey_[A-Za-z0-9]{1,64}$/, { error: "expected an External Key id (ekey_…)" });
const bucketReference = z.strictObject({
  project_number: z
    .string({ error: "expected a Google Cloud project number in decimal" })
    .regex(/^[0-9]{1,20}$/, { error: "expected a Google Cloud project number in decimal" }),
  bucket_name: z
    .string({ error: "expected a Cloud Storage bucket name" })
    .regex(/^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/, {
      error: "expected a Cloud Storage bucket name (3-222 lowercase letters, digits, '.', '_' or '-')",
    }),
});
const fewRegions = (value: Record<string, unknown> | null | undefined) =>
  value == null || Object.keys(value).length <= MAX_REGIONS;
const regionError = { error: `at most ${MAX_REGIONS} regions` };

export const dataControlsBodySchema = z.strictObject({
  cmek: z
    .discriminatedUnion(
      "type",
      [
        z.strictObject({ type: z.literal("disabled") }),
        z.strictObject({
          type: z.literal("enabled"),
          external_key_ids: z
            .record(region, externalKeyId.nullable())
            .nullish()
            .refine(fewRegions, regionError),
        }),
      ],
      { error: discriminatorError("cmek type") },
    )
    .optional(),
  storage: z
    .discriminatedUnion(
      "type",
      [
        z.strictObject({ type: z.literal("disabled") }),
        z.strictObject({
          type: z.literal("enabled"),
          buckets: z.record(region, bucketReference.nullable()).optional().refine(fewRegions, regionError),
        }),
      ],
      { error: discriminatorError("storage type") },
    )
    .optional(),
});

/** The bodies without a `user-profiles-…` beta header, as the OpenAPI document describes them. */
export const createUserProfileBodySchema = userProfileBodySchema("ga", false);
export const updateUserProfileBodySchema = userProfileBodySchema("ga", true);
