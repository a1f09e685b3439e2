/** How large a skill bundle may be. Every bound is checked before anything is stored. */
export interface SkillLimits {
  /** The bundle's files together, uncompressed (a zip's declared sizes are checked before inflating). */
  maxTotalBytes: number;
  /** One file, uncompressed. */
  maxFileBytes: number;
  maxFiles: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_SKILL_LIMITS: SkillLimits = {
  maxTotalBytes: 30 * MIB,
  maxFileBytes: 30 * MIB,
  maxFiles: 1000,
};

/** Front matter bounds (the SDK: display names up to 255 characters). */
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_DISPLAY_NAME_MAX = 255;
export const SKILL_PATH_MAX = 1024;
export const SKILL_SEGMENT_MAX = 255;

/**
 * The limits from `AWAKEN_SKILL_MAX_BYTES` (total) and `AWAKEN_SKILL_MAX_FILE_BYTES` (one file,
 * default: the total). A value that is not a positive whole number of bytes throws: start-up stops
 * rather than run with a limit the operator did not mean.
 */
export function skillLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): SkillLimits {
  const maxTotalBytes = bytesVar(env, "AWAKEN_SKILL_MAX_BYTES") ?? DEFAULT_SKILL_LIMITS.maxTotalBytes;
  const maxFileBytes = bytesVar(env, "AWAKEN_SKILL_MAX_FILE_BYTES") ?? maxTotalBytes;
  if (maxFileBytes > maxTotalBytes) {
    throw new Error(
      `AWAKEN_SKILL_MAX_FILE_BYTES (${maxFileBytes}) exceeds AWAKEN_SKILL_MAX_BYTES (${maxTotalBytes})`,
    );
  }
  return { maxTotalBytes, maxFileBytes, maxFiles: DEFAULT_SKILL_LIMITS.maxFiles };
}

function bytesVar(env: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`${name} must be a positive whole number of bytes, got ${JSON.stringify(raw)}`);
  }
  return value;
}
