/** Query schema of the Awaken image-build list. */
import { z } from "zod";
import { paginationQuery } from "./common.js";

export const listImageBuildsQuerySchema = z.strictObject({ ...paginationQuery });
