/** Query schema of the admin audit read (`GET /v1/awaken/audit`). */
import { z } from "zod";
import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES } from "../../../control/adminAudit.js";
import { paginationQuery } from "./common.js";

export const listAdminAuditQuerySchema = z.strictObject({
  ...paginationQuery,
  resource_type: z.enum(AUDIT_RESOURCE_TYPES).optional(),
  resource_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, { error: "expected an id (letters, digits, _ or -; at most 128)" })
    .optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
});
