import { AwakenError } from "./errors.js";

export const METADATA_LIMITS = { maxKeys: 16, maxKeyLength: 64, maxValueLength: 512 } as const;

/**
 * Metadata updates are patches on the wire (§2): a string upserts, `null` deletes, and for
 * environments `""` deletes too. The result must still fit the limits.
 */
export function applyMetadataPatch(
  current: Record<string, string>,
  patch: Record<string, string | null> | undefined,
  options: { emptyDeletes?: boolean } = {},
): Record<string, string> {
  if (!patch) return current;
  const next = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || (options.emptyDeletes && value === "")) delete next[key];
    else next[key] = value;
  }
  if (Object.keys(next).length > METADATA_LIMITS.maxKeys) {
    throw new AwakenError(
      "invalid_metadata",
      `metadata may hold at most ${METADATA_LIMITS.maxKeys} keys; this update would leave ${Object.keys(next).length}`,
      { details: { error_code: "invalid_metadata" } },
    );
  }
  return next;
}
