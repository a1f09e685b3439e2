/** Query schemas of the Awaken operator reads: credential revisions, the custody audit. */
import { z } from "zod";
import { paginationQuery } from "./common.js";

/** An id a filter names: the characters ids are made of, so a hostile string never reaches a query. */
const filterId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, { error: "expected an id (letters, digits, _ or -; at most 128)" });

export const listCredentialRevisionsQuerySchema = z.strictObject({ ...paginationQuery });

export const listCredentialOpensQuerySchema = z.strictObject({
  ...paginationQuery,
  credential_id: filterId.optional(),
  session_id: filterId.optional(),
});
