/**
 * Files request schemas (param types from `@anthropic-ai/sdk` resources/files and beta/files). The
 * upload is multipart (multipartUploads.ts); these are the list query and the upload's text field.
 */
import { z } from "zod";
import { invalid } from "../../../kernel/errors.js";
import { PAGE_LIMIT, queryArray, queryInt } from "./common.js";

export const FILE_LIST_LIMITS = { ids: 100, id: 255 } as const;

const fileId = z.string().min(1).max(FILE_LIST_LIMITS.id);

/**
 * `limit`/`page` (PageCursor), or `ids` (at most 100 after de-duplication, one page, mutually
 * exclusive with `limit` and `page`), and `scope_id` with either.
 */
export const listFilesQuerySchema = z
  .strictObject({
    limit: queryInt(PAGE_LIMIT.min, PAGE_LIMIT.max).optional(),
    page: z.string().optional(),
    ids: queryArray(fileId)
      .transform((ids) => [...new Set(ids)])
      .refine((ids) => ids.length <= FILE_LIST_LIMITS.ids, {
        error: `must contain at most ${FILE_LIST_LIMITS.ids} distinct ids`,
      })
      .optional(),
    scope_id: z.string().min(1).max(FILE_LIST_LIMITS.id).optional(),
  })
  .superRefine((query, ctx) => {
    if (query.ids !== undefined && (query.limit !== undefined || query.page !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["ids"],
        message: "cannot be combined with limit or page; a list by ids is always one page",
      });
    }
  });

/** `expires_in_seconds` as a multipart text field: a decimal integer in range, or absent. */
export function parseExpiresInSeconds(text: string | undefined, min: number, max: number): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(
      `expires_in_seconds: expected an integer between ${min} and ${max}, got ${JSON.stringify(text.slice(0, 40))}`,
    );
  }
  return value;
}
