/**
 * The Files limits an operator sets through the environment. Uploads are read into memory, so the
 * per-file limit also bounds what one request holds.
 */
export interface FileLimits {
  /** `AWAKEN_FILE_MAX_BYTES`: bytes of one file. */
  maxFileBytes: number;
  /** `AWAKEN_WORKSPACE_FILES_MAX_BYTES`: bytes of all a workspace's files together. */
  workspaceMaxBytes: number;
}

const MIB = 1024 * 1024;
export const DEFAULT_FILE_LIMITS: FileLimits = {
  maxFileBytes: 100 * MIB,
  workspaceMaxBytes: 5 * 1024 * MIB,
};
/** One upload is held in memory: a per-file limit above this is refused at start-up. */
const MAX_FILE_BYTES_CEILING = 1024 * MIB;

/** The limits from `env`; a malformed value throws a message naming the variable (start-up stops). */
export function fileLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): FileLimits {
  const maxFileBytes = bytesFrom(
    env,
    "AWAKEN_FILE_MAX_BYTES",
    DEFAULT_FILE_LIMITS.maxFileBytes,
    MAX_FILE_BYTES_CEILING,
  );
  const workspaceMaxBytes = bytesFrom(
    env,
    "AWAKEN_WORKSPACE_FILES_MAX_BYTES",
    DEFAULT_FILE_LIMITS.workspaceMaxBytes,
    Number.MAX_SAFE_INTEGER,
  );
  return { maxFileBytes, workspaceMaxBytes };
}

function bytesFrom(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
  ceiling: number,
): number {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1 || value > ceiling) {
    throw new Error(
      `${name} must be a whole number of bytes between 1 and ${ceiling} (got ${JSON.stringify(text.slice(0, 40))}); unset it for the default ${fallback}`,
    );
  }
  return value;
}
