import { z } from "zod";
import { paginationQuery } from "./common.js";

/** `source` filters by where a skill comes from; only custom skills exist here, the others list none. */
export const listSkillsQuerySchema = z.strictObject({
  ...paginationQuery,
  source: z.enum(["custom", "anthropic", "anthropic_example", "plugin"]).optional(),
});

export const listSkillVersionsQuerySchema = z.strictObject({ ...paginationQuery });
