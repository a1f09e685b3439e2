import { InvalidArgumentError, Option } from "commander";
import type { Logger } from "pino";
import {
  checkExecutionOption,
  EXECUTION_DEFAULTS,
  EXECUTION_MINIMUMS,
  ExecutionOptionError,
  type ExecutionOptionName,
} from "../worker/workerOptions.js";

/** A commander parser for integer options with bounds and a message naming the option. */
export function integer(name: string, min: number, max?: number) {
  return (value: string) => {
    // Number("") and Number(" ") are 0: an empty value is no number at all.
    const n = value.trim() === "" ? Number.NaN : Number(value);
    if (!Number.isInteger(n) || n < min || (max !== undefined && n > max))
      throw new InvalidArgumentError(
        max === undefined
          ? `${name} must be an integer ≥ ${min}`
          : `${name} must be an integer from ${min} to ${max}`,
      );
    return n;
  };
}

/** A commander parser for one execution figure, checked by the options step itself (worker/workerOptions.ts). */
export function executionFlag(key: ExecutionOptionName, flag: string, min?: number) {
  return (value: string) => {
    try {
      return checkExecutionOption(key, Number(value), flag, min);
    } catch (error) {
      if (error instanceof ExecutionOptionError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/** A TCP port to listen on: 0 (any free one) to 65535. */
export function portNumber(name: string) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > 65_535)
      throw new InvalidArgumentError(`${name} must be a port number from 0 to 65535`);
    return n;
  };
}

/** Model call options shared by every process that runs the runtime (awaken up, awaken worker). */
export function modelOptions(): Option[] {
  return [
    new Option("--model-retry-base-ms <ms>", "first backoff after a transient model error")
      .default(EXECUTION_DEFAULTS.modelRetryBaseMs)
      .argParser(executionFlag("modelRetryBaseMs", "--model-retry-base-ms")),
    // In seconds on the command line; the options step checks the milliseconds.
    new Option("--model-idle-timeout-s <s>", "abort and retry a model stream silent for this long")
      .default(EXECUTION_DEFAULTS.modelIdleTimeoutMs / 1_000)
      .argParser(integer("--model-idle-timeout-s", EXECUTION_MINIMUMS.modelIdleTimeoutMs / 1_000)),
  ];
}

/** `--drain-ms` of `awaken up` and `awaken worker` (or AWAKEN_DRAIN_MS). */
export function drainOption(): Option {
  return new Option(
    "--drain-ms <ms>",
    "on SIGTERM: stop claiming, let runs in hand finish for this long, then hand the rest back to other workers",
  )
    .env("AWAKEN_DRAIN_MS")
    .default(EXECUTION_DEFAULTS.drainMs)
    .argParser(executionFlag("drainMs", "--drain-ms"));
}

/** What a clean stop may take beyond the drain (closing streams, sandboxes, the database). */
const STOP_AFTER_DRAIN_MS = 6_000;

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * SIGTERM/SIGINT handling installed before anything is printed: a supervisor may send SIGTERM the
 * moment it reads the banner, and an unhandled SIGTERM would kill the process without a clean stop.
 * `ready` hands over what to stop; a signal during start-up stops it as soon as it exists.
 */
export function installShutdown(
  logger: Logger,
  label: string,
  drainMs: number = EXECUTION_DEFAULTS.drainMs,
): { stopping: () => boolean; ready: (s: Stoppable) => Promise<boolean> } {
  let target: Stoppable | null = null;
  let stopping = false;
  const stop = (s: Stoppable) =>
    s.stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, `${label} shutdown failed`);
        process.exit(1);
      },
    );
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${label} shutting down`);
    // Hard deadline: a clean stop takes well under this beyond the drain; never hang an orchestrator.
    setTimeout(() => process.exit(1), drainMs + STOP_AFTER_DRAIN_MS).unref();
    if (target) void stop(target);
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  return {
    stopping: () => stopping,
    /** Returns false when a signal already arrived (the caller must not announce itself). */
    ready: async (s) => {
      target = s;
      if (!stopping) return true;
      await stop(s);
      return false;
    },
  };
}

/**
 * `--allow-unsandboxed-tier` of `awaken up`, `awaken coordinator` and `awaken worker`: the help names
 * the risk, and what is in reach differs by process (only the all-in-one server holds a master key).
 */
export function unsandboxedHelp(inReach: string): string {
  return `RISKY: let environments choose sandbox tier "none", which runs built-in tools unsandboxed as this process's user (they can read ${inReach}); off by default`;
}

/** Logged at start-up while the option is on, so the choice stays visible in the logs. */
export const UNSANDBOXED_WARNING =
  'the unsandboxed tier is enabled: environments may choose sandbox tier "none", whose built-in tools run as this process\'s user';
