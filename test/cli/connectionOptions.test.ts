import { Command } from "commander";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { addServerOptions, serverOptionsFrom, UP_SERVER_DEFAULTS } from "../../src/cli/upCommand.js";
import { DEFAULT_CONNECTION_LIMITS } from "../../src/edge/http/connectionLimits.js";

function parsed(args: string[]) {
  const command = addServerOptions(new Command("up").exitOverride(), { ...UP_SERVER_DEFAULTS, workers: 0 });
  command.parse(args, { from: "user" });
  return serverOptionsFrom(command.opts(), pino({ level: "silent" })).connections;
}

describe("connection bound options", () => {
  it("default to the documented bounds and are listed in --help", () => {
    expect(parsed([])).toEqual(DEFAULT_CONNECTION_LIMITS);
    const help = addServerOptions(new Command("up"), { ...UP_SERVER_DEFAULTS, workers: 0 }).helpInformation();
    for (const flag of [
      "--headers-timeout-ms",
      "--request-timeout-ms",
      "--keep-alive-timeout-ms",
      "--max-connections ",
      "--max-connections-per-address",
    ])
      expect(help).toContain(flag);
    expect(help).toContain("AWAKEN_MAX_CONNECTIONS_PER_ADDRESS");
  });

  it("take a flag, else the environment variable", () => {
    process.env.AWAKEN_MAX_CONNECTIONS_PER_ADDRESS = "5000";
    process.env.AWAKEN_HEADERS_TIMEOUT_MS = "10000";
    try {
      expect(parsed(["--headers-timeout-ms", "2000"])).toMatchObject({
        headersTimeoutMs: 2_000,
        maxConnectionsPerAddress: 5_000,
      });
    } finally {
      delete process.env.AWAKEN_MAX_CONNECTIONS_PER_ADDRESS;
      delete process.env.AWAKEN_HEADERS_TIMEOUT_MS;
    }
  });

  it("refuse a value that is not a whole number in range", () => {
    expect(() => parsed(["--max-connections", "0"])).toThrow(/--max-connections must be an integer ≥ 1/);
  });
});
