/**
 * The memory family's limits, read once from the environment when the server starts. A value that
 * is not a whole number in range stops start-up with a message naming the variable: a typo must not
 * quietly become "no limit" or the default.
 */

export interface MemoryLimits {
  /** Largest memory content, in UTF-8 bytes (`AWAKEN_MEMORY_MAX_BYTES`). */
  maxContentBytes: number;
  /** Most memories one store holds (`AWAKEN_MEMORY_MAX_PER_STORE`). */
  maxMemoriesPerStore: number;
}

/** The SDK's documented content maximum (100 kB) and a store size a directory listing copes with. */
export const DEFAULT_MEMORY_LIMITS: MemoryLimits = { maxContentBytes: 102_400, maxMemoriesPerStore: 10_000 };

const CEILINGS = { maxContentBytes: 16 * 1024 * 1024, maxMemoriesPerStore: 1_000_000 } as const;

export function memoryLimitsFrom(env: Readonly<Record<string, string | undefined>>): MemoryLimits {
  return {
    maxContentBytes: wholeNumber(
      env,
      "AWAKEN_MEMORY_MAX_BYTES",
      DEFAULT_MEMORY_LIMITS.maxContentBytes,
      CEILINGS.maxContentBytes,
    ),
    maxMemoriesPerStore: wholeNumber(
      env,
      "AWAKEN_MEMORY_MAX_PER_STORE",
      DEFAULT_MEMORY_LIMITS.maxMemoriesPerStore,
      CEILINGS.maxMemoriesPerStore,
    ),
  };
}

function wholeNumber(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
  ceiling: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > ceiling) {
    throw new Error(`${name} must be a whole number from 1 to ${ceiling}; got ${JSON.stringify(raw)}`);
  }
  return value;
}
