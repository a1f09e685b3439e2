import { z } from "zod";
import { PAGE_LIMIT, queryInt } from "./common.js";

/** `models.list`: the SDK's `Page` params (`before_id` pages backwards, `after_id` forwards). */
export const listModelsQuerySchema = z.strictObject({
  limit: queryInt(PAGE_LIMIT.min, PAGE_LIMIT.max).default(PAGE_LIMIT.default),
  after_id: z.string().min(1).max(256).optional(),
  before_id: z.string().min(1).max(256).optional(),
});
