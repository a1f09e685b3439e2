/** Query schemas of the Console's read models (`/v1/awaken/sessions/outcomes`, `/v1/awaken/overview`). */
import { z } from "zod";

/** At most one list page of sessions at a time: each id costs one history read. */
export const MAX_OUTCOME_SESSIONS = 50;

const sessionId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, { error: "expected a session id" });

export const sessionOutcomesQuerySchema = z.strictObject({
  // One id arrives as a string, several as an array (`session_ids[]=…`).
  session_ids: z.preprocess(
    (v) => (typeof v === "string" ? [v] : v),
    z.array(sessionId).min(1).max(MAX_OUTCOME_SESSIONS),
  ),
});

export const overviewQuerySchema = z.strictObject({});
