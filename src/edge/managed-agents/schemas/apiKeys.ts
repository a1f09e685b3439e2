import { z } from "zod";
import { API_KEY_ROLES } from "../../../control/apiKeyRoles.js";
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
