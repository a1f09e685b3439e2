import { z } from "zod";

/** PUT /v1/awaken/data_subjects/{subject_id}/consents/{purpose} */
export const setConsentBodySchema = z.strictObject({ granted: z.boolean() });

/** POST /v1/awaken/data_subjects/{subject_id}/erasure takes no fields (an empty object, or no body). */
export const eraseBodySchema = z.strictObject({});
