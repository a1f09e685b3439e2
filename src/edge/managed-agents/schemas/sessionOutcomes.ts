/** Query schemas of the Console's read models (`/v1/awaken/sessions/outcomes`, `/v1/awaken/overview`). */
import { z } from "zod";
import { queryArray } from "./common.js";

/** At most one list page of sessions at a time: each id costs one history read. */
export const MAX_OUTCOME_SESSIONS = 50;

export const sessionOutcomesQuerySchema = z.strictObject({
  session_ids: queryArray(
    z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, { error: "expected a session id" }),
  ).pipe(z.array(z.string()).min(1).max(MAX_OUTCOME_SESSIONS)),
});

export const overviewQuerySchema = z.strictObject({});
