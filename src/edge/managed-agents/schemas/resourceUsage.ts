/** Query schema of a session's resource usage (an Awaken extension): a page of its runs' records. */
import { z } from "zod";
import { paginationQuery } from "./common.js";

export const listResourceUsageQuerySchema = z.strictObject({ ...paginationQuery });
