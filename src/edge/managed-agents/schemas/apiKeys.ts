import { z } from "zod";
import { MAX_ACCESS_TOKEN_TTL_S } from "../../../control/accessTokens.js";
import { API_KEY_ROLES } from "../../../control/apiKeyRoles.js";
import { ACCESS_OPERATIONS } from "../../../control/callerScope.js";
import { boundedString, paginationQuery } from "./common.js";

/** `POST /v1/awaken/api_keys`: the role is required (no default power), the rest optional. */
export const createApiKeyBodySchema = z.strictObject({
  role: z.enum(API_KEY_ROLES, { error: `expected one of ${API_KEY_ROLES.join(", ")}` }),
  label: boundedString(1, 256).optional(),
  workspace_id: boundedString(1, 80).optional(),
  /** The agents a runtime key may use (validated by IAM); absent: every agent of the workspace. */
  agent_ids: z.array(boundedString(1, 128)).max(64).optional(),
});

export const listApiKeysQuerySchema = z.strictObject({ ...paginationQuery });

/**
 * `POST /v1/awaken/access_tokens`: what the token may do, on which agents, in which session or
 * session namespace, how long. The namespace's form is IAM's to check (it names what to fix).
 */
export const createAccessTokenBodySchema = z.strictObject({
  operations: z
    .array(z.enum(ACCESS_OPERATIONS, { error: `expected one of ${ACCESS_OPERATIONS.join(", ")}` }))
    .min(1)
    .max(ACCESS_OPERATIONS.length * 2),
  agent_ids: z.array(boundedString(1, 128)).max(64).optional(),
  session_id: boundedString(1, 128).optional(),
  session_namespace: z.string().max(1024).optional(),
  ttl_seconds: z.number().int().min(1).max(MAX_ACCESS_TOKEN_TTL_S).optional(),
});
