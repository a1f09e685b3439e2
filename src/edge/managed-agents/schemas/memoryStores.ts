/**
 * Memory stores, memories and memory versions request schemas (param types from `@anthropic-ai/sdk`
 * resources/beta/memory-stores). Paths are checked by the memory service (one rule for the API and
 * a run's write-back); these bound the shapes and the strings.
 */
import { z } from "zod";
import {
  boundedString,
  createdAtInclusiveRange,
  discriminatorError,
  metadataPatchSchema,
  metadataSchema,
  paginationQuery,
  queryBoolean,
  queryInt,
} from "./common.js";

export const MEMORY_STORE_LIMITS = { name: 255, description: 1024, fullViewPage: 20, depth: 20 } as const;

/** Names become a directory in a session's mount: no control characters (SDK rule). */
const storeName = boundedString(1, MEMORY_STORE_LIMITS.name).refine((name) => !/\p{Cc}/u.test(name), {
  error: "must not contain control characters",
});
const description = boundedString(0, MEMORY_STORE_LIMITS.description);

export const createMemoryStoreBodySchema = z.strictObject({
  name: storeName,
  description: description.optional(),
  metadata: metadataSchema.optional(),
});

export const updateMemoryStoreBodySchema = z.strictObject({
  name: storeName.nullish(),
  description: description.nullish(),
  metadata: metadataPatchSchema.nullish(),
});

export const listMemoryStoresQuerySchema = z.strictObject({
  include_archived: queryBoolean.default(false),
  created_at: createdAtInclusiveRange.optional(),
  ...paginationQuery,
});

const viewSchema = z.enum(["basic", "full"]);
export const viewQuerySchema = z.strictObject({ view: viewSchema.optional() });

/** 64 lowercase hex characters, as `content_sha256` is given. */
const sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: "expected 64 lowercase hexadecimal characters" });

/** A path is any string here; the service names what is wrong with it. */
const pathString = z.string({ error: "expected a string such as /notes/todo.md" });

export const createMemoryBodySchema = z.strictObject({
  path: pathString,
  // The SDK types `content` as nullable; null creates an empty memory, like "".
  content: z.string().nullable(),
});

const preconditionSchema = z.discriminatedUnion(
  "type",
  [z.strictObject({ type: z.literal("content_sha256"), content_sha256: sha256Hex })],
  { error: discriminatorError("precondition type") },
);

export const updateMemoryBodySchema = z.strictObject({
  path: pathString.nullish(),
  content: z.string().nullish(),
  precondition: preconditionSchema.optional(),
});

export const listMemoriesQuerySchema = z.strictObject({
  path_prefix: z.string().optional(),
  depth: queryInt(0, MEMORY_STORE_LIMITS.depth).default(0),
  view: viewSchema.default("basic"),
  ...paginationQuery,
});

export const deleteMemoryQuerySchema = z.strictObject({ expected_content_sha256: sha256Hex.optional() });

export const listMemoryVersionsQuerySchema = z.strictObject({
  memory_id: z.string().min(1).optional(),
  operation: z.enum(["created", "modified", "deleted"]).optional(),
  session_id: z.string().min(1).optional(),
  api_key_id: z.string().min(1).optional(),
  service_account_id: z.string().min(1).optional(),
  created_at: createdAtInclusiveRange.optional(),
  view: viewSchema.default("basic"),
  ...paginationQuery,
});
