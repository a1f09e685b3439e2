import { z } from "zod";

/**
 * The Managed Agents error envelope (docs/managed-agents-wire.md §1.4), as every `/v1/` route of
 * that wire answers a failure: `managedErrorBody` builds it, this describes it to clients.
 */
export const errorEnvelopeSchema = z.object({
  type: z.literal("error"),
  error: z.looseObject({
    type: z.string().meta({ description: "invalid_request_error, not_found_error, permission_error, …" }),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
  request_id: z.string(),
});
