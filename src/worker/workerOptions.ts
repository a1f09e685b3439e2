import { AwakenError } from "../kernel/errors.js";
import { DEFAULT_RETRY_POLICY } from "../runtime/retryPolicy.js";

export interface WorkerOptions {
  /** Worker identity; an incarnation suffix is added per process start. */
  id: string;
  /** Runs executed at once by this worker. */
  concurrency: number;
  /** How long a claim lives without renewal. Renewed every third of it. */
  leaseMs: number;
  /** Poll interval when no wake signal arrives; polling alone must finish every run. */
  pollMs: number;
  /** On shutdown, how long in-flight runs may take to settle before their claims are released. */
  drainMs: number;
}

/**
 * The figures of every process that executes runs: `awaken up` (and `awaken coordinator`),
 * `awaken worker` and the embedded `openAwaken`. Their defaults and bounds live here only, so the
 * three cannot drift (a remote worker takes its lease and poll from the coordinator it joins).
 */
export interface ExecutionOptions {
  /** Runs executed at once: `--workers`, `--concurrency`, `workers`. 0: this process executes none. */
  concurrency: number;
  /** How long a claim lives without renewal; a crashed run is resumed after it lapses. */
  leaseMs: number;
  /** An idle slot's poll when no wake signal arrives. */
  pollMs: number;
  /** On SIGTERM (or close), how long runs in hand may finish before their claims are handed back. */
  drainMs: number;
  /** A model stream silent this long is aborted and retried. */
  modelIdleTimeoutMs: number;
  /** The first wait after a transient model error (doubling, see runtime/retryPolicy.ts). */
  modelRetryBaseMs: number;
}

export const EXECUTION_DEFAULTS: Readonly<ExecutionOptions> = Object.freeze({
  concurrency: 4,
  leaseMs: 15_000,
  pollMs: 500,
  // Long enough for most model steps to commit, short of orchestrators' grace.
  drainMs: 3_000,
  modelIdleTimeoutMs: 300_000,
  modelRetryBaseMs: DEFAULT_RETRY_POLICY.baseDelayMs,
});

/** The least each may be: below these a lease lapses before its renewal, or a loop spins. */
export const EXECUTION_MINIMUMS: Readonly<ExecutionOptions> = Object.freeze({
  concurrency: 0,
  leaseMs: 100,
  pollMs: 10,
  drainMs: 0,
  modelIdleTimeoutMs: 1_000,
  modelRetryBaseMs: 0,
});

/** `--drain-ms` default (kept by name for its importers). */
export const DEFAULT_DRAIN_MS = EXECUTION_DEFAULTS.drainMs;

/** A figure out of bounds, named as its caller spelled it (`--lease-ms`, `leaseMs`). */
export class ExecutionOptionError extends AwakenError {
  constructor(message: string) {
    super("invalid_request", message);
    this.name = "ExecutionOptionError";
  }
}

export type ExecutionOptionName = keyof ExecutionOptions;

/** One figure checked: an integer at or above its minimum (`min` raises it for one caller). */
export function checkExecutionOption(
  key: ExecutionOptionName,
  value: unknown,
  spelled: string = key,
  min: number = EXECUTION_MINIMUMS[key],
): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new ExecutionOptionError(`${spelled} must be an integer ≥ ${min}`);
  return value;
}

/**
 * The options step of every entry point: what was given, checked, and the defaults for the rest.
 * `spelled` names each option as the caller's user wrote it, so an error points at their input.
 */
export function executionOptions(
  given: { [K in ExecutionOptionName]?: number | undefined },
  spelled: Partial<Record<ExecutionOptionName, string>> = {},
): ExecutionOptions {
  const resolved = { ...EXECUTION_DEFAULTS };
  for (const key of Object.keys(EXECUTION_DEFAULTS) as ExecutionOptionName[]) {
    const value = given[key];
    if (value !== undefined) resolved[key] = checkExecutionOption(key, value, spelled[key] ?? key);
  }
  return resolved;
}
