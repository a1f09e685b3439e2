/**
 * Self-hosted work queue request schemas (wire §2.8; params from `@anthropic-ai/sdk`
 * resources/beta/environments/work.ts), and the Awaken extension that mints environment keys.
 */
import { z } from "zod";
import { MAX_POLL_BLOCK_MS } from "../../../coordinator/workLease.js";
import { boundedString, metadataPatchSchema, paginationQuery, queryInt } from "./common.js";

export const pollWorkQuerySchema = z.strictObject({
  block_ms: queryInt(1, MAX_POLL_BLOCK_MS).optional(),
  reclaim_older_than_ms: queryInt(0).optional(),
});

export const heartbeatQuerySchema = z.strictObject({
  expected_last_heartbeat: z.string().optional(),
  desired_ttl_seconds: queryInt(1).optional(),
});

export const stopWorkBodySchema = z.strictObject({
  force: z.boolean().nullish(),
});

export const updateWorkBodySchema = z.strictObject({
  metadata: metadataPatchSchema,
});

export const listWorkQuerySchema = z.strictObject({ ...paginationQuery });

export const ENVIRONMENT_KEY_LIMITS = { name: 256 } as const;

export const createEnvironmentKeyBodySchema = z.strictObject({
  name: boundedString(1, ENVIRONMENT_KEY_LIMITS.name).nullish(),
});

export const listEnvironmentKeysQuerySchema = z.strictObject({ ...paginationQuery });
