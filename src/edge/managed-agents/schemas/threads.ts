import { z } from "zod";
import { paginationQuery, queryArray } from "./common.js";
import { SESSION_STATUSES } from "./sessions.js";

/** GET /v1/sessions/{id}/threads (PageCursor, oldest first): `statuses[]` keeps threads of those statuses. */
export const listThreadsQuerySchema = z.strictObject({
  statuses: queryArray(
    z.enum(SESSION_STATUSES, {
      error: (issue) =>
        `unknown status ${JSON.stringify(issue.input)}; expected one of ${SESSION_STATUSES.map((s) => `"${s}"`).join(", ")}`,
    }),
  ).optional(),
  ...paginationQuery,
});
