import { AwakenError } from "./errors.js";

// Metadata (wire §2: ≤16 keys, key ≤64 chars, value ≤512 chars; a patch on update). Shared by every
// resource that carries metadata; the edge schemas reuse `metadataProblems`.

// ---------------------------------------------------------------------------------------------------

export const METADATA_LIMITS = { maxKeys: 16, maxKeyLength: 64, maxValueLength: 512 } as const;

export interface MetadataProblem {
  /** The offending key, when the problem is about one entry. */
  key?: string;
  message: string;
}

/** Every limit a stored metadata bag breaks, worded as what to fix. Empty when the bag is valid. */
export function metadataProblems(metadata: Record<string, string | null>): MetadataProblem[] {
  const problems: MetadataProblem[] = [];
  const { maxKeys, maxKeyLength, maxValueLength } = METADATA_LIMITS;
  let kept = 0;
  for (const [key, value] of Object.entries(metadata)) {
    if (value !== null) kept++;
    if (key.length === 0 || key.length > maxKeyLength) {
      problems.push({ key, message: `keys must be 1-${maxKeyLength} characters (got ${key.length})` });
    }
    if (value !== null && value.length > maxValueLength) {
      problems.push({
        key,
        message: `values must be at most ${maxValueLength} characters (got ${value.length})`,
      });
    }
  }
  if (kept > maxKeys) {
    problems.push({ message: `at most ${maxKeys} keys are allowed (got ${kept}); remove some keys` });
  }
  return problems;
}

/** Throws `invalid_metadata` naming the first broken limit. */
export function assertValidMetadata(metadata: Record<string, string>, field = "metadata"): void {
  const [problem] = metadataProblems(metadata);
  if (!problem) return;
  const where = problem.key === undefined ? field : `${field}[${JSON.stringify(problem.key)}]`;
  throw new AwakenError("invalid_metadata", `${where}: ${problem.message}`);
}

/**
 * Applies a metadata patch: a string upserts, `null` deletes (deleting a missing key is a no-op).
 * Environments also treat `""` as delete (wire §2) — pass `emptyStringDeletes`. The result is checked
 * against the limits, so a patch that would grow the bag past 16 keys fails with `invalid_metadata`.
 */
export function applyMetadataPatch(
  current: Record<string, string>,
  patch: Record<string, string | null> | null | undefined,
  options: { emptyStringDeletes?: boolean } = {},
): Record<string, string> {
  const next: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null || (value === "" && options.emptyStringDeletes)) delete next[key];
    else next[key] = value;
  }
  assertValidMetadata(next);
  return next;
}
