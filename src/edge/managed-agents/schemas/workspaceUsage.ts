import { z } from "zod";

/** How many UTC days back the usage route reads (each is a read of that day's usage facts). */
export const MAX_USAGE_DAYS = 31;

export const workspaceUsageQuerySchema = z.strictObject({
  days: z.coerce.number().int().min(1).max(MAX_USAGE_DAYS).optional(),
});
