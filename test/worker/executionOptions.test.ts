import { Command } from "commander";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  addServerOptions,
  serverOptionsFrom,
  UP_SERVER_DEFAULTS,
  upCommand,
} from "../../src/cli/upCommand.js";
import { workerCommand } from "../../src/cli/workerCommand.js";
import { embeddedServerOptions } from "../../src/embedded/openAwaken.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import {
  EXECUTION_DEFAULTS,
  ExecutionOptionError,
  executionOptions,
} from "../../src/worker/workerOptions.js";

const silent = pino({ level: "silent" });

/** `awaken up` as parsed from `args` (no action runs: only the shared server options are added). */
function up(args: string[]) {
  const command = addServerOptions(new Command("up").exitOverride(), UP_SERVER_DEFAULTS);
  command.parse(args, { from: "user" });
  return serverOptionsFrom(command.opts(), silent);
}

/** `awaken worker`'s options after parsing `args` (parseOptions runs the parsers, not the action). */
function worker(args: string[]) {
  const command = workerCommand().exitOverride();
  command.parseOptions(args);
  return command.opts();
}

describe("the execution options step", () => {
  it("awaken up, awaken worker and openAwaken start from the same figures", () => {
    const fromUp = up([]);
    const fromWorker = worker([]);
    const embedded = embeddedServerOptions({ dataDir: "/nonexistent" }, {});
    for (const options of [fromUp, embedded]) {
      expect(options.leaseMs).toBe(EXECUTION_DEFAULTS.leaseMs);
      expect(options.workers).toBe(EXECUTION_DEFAULTS.concurrency);
      expect(options.drainMs).toBe(EXECUTION_DEFAULTS.drainMs);
      expect(options.modelIdleTimeoutMs).toBe(EXECUTION_DEFAULTS.modelIdleTimeoutMs);
      expect(options.retry.baseDelayMs).toBe(EXECUTION_DEFAULTS.modelRetryBaseMs);
    }
    expect(fromWorker.concurrency).toBe(EXECUTION_DEFAULTS.concurrency);
    expect(fromWorker.drainMs).toBe(EXECUTION_DEFAULTS.drainMs);
    expect(fromWorker.modelIdleTimeoutS * 1_000).toBe(EXECUTION_DEFAULTS.modelIdleTimeoutMs);
    expect(fromWorker.modelRetryBaseMs).toBe(EXECUTION_DEFAULTS.modelRetryBaseMs);
    // The model retry policy's own default is the same figure, not a second one.
    expect(DEFAULT_RETRY_POLICY.baseDelayMs).toBe(EXECUTION_DEFAULTS.modelRetryBaseMs);
    // `awaken up` itself (not only the shared options) keeps the default slot count.
    expect(upCommand().opts().workers).toBe(EXECUTION_DEFAULTS.concurrency);
    expect(EXECUTION_DEFAULTS.leaseMs).toBe(15_000);
  });

  it("a given figure wins over the default, the same way at every entry point", () => {
    expect(up(["--lease-ms", "2000", "--workers", "0"])).toMatchObject({ leaseMs: 2_000, workers: 0 });
    expect(embeddedServerOptions({ dataDir: "/nonexistent", leaseMs: 2_000, workers: 0 }, {})).toMatchObject({
      leaseMs: 2_000,
      workers: 0,
    });
    expect(worker(["--concurrency", "2"]).concurrency).toBe(2);
  });

  it("a bad figure is refused with an error naming the option as its caller wrote it", () => {
    expect(() => up(["--lease-ms", "50"])).toThrow("--lease-ms must be an integer ≥ 100");
    expect(() => up(["--workers", "-1"])).toThrow("--workers must be an integer ≥ 0");
    expect(() => up(["--drain-ms", "soon"])).toThrow("--drain-ms must be an integer ≥ 0");
    expect(() => worker(["--concurrency", "0"])).toThrow("--concurrency must be an integer ≥ 1");
    expect(() => embeddedServerOptions({ dataDir: "/nonexistent", leaseMs: 50 }, {})).toThrow(
      new ExecutionOptionError("leaseMs must be an integer ≥ 100"),
    );
    expect(() => embeddedServerOptions({ dataDir: "/nonexistent", workers: 1.5 }, {})).toThrow(
      "workers must be an integer ≥ 0",
    );
    expect(() => executionOptions({ pollMs: Number.NaN })).toThrow("pollMs must be an integer ≥ 10");
  });

  it("a refusal is an invalid-request error, never retryable", () => {
    try {
      executionOptions({ leaseMs: -1 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ExecutionOptionError);
      expect(error).toMatchObject({ code: "invalid_request", retryable: false });
    }
  });
});
