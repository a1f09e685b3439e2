/**
 * `awaken up --image-build-lease-s`: shown in --help with its default, refused with a message naming
 * the option and its bounds for anything but an integer from 2 to 3600; the service refuses the same.
 */
import { CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { upCommand } from "../../src/cli/upCommand.js";
import {
  DEFAULT_BUILD_LEASE_MS,
  ImageBuildService,
} from "../../src/coordinator/imageBuilds/imageBuildService.js";

/** Parses `args` as `awaken up` would, without running it: the refusal's message, or null. */
async function refusal(args: string[]): Promise<string | null> {
  let err = "";
  const command = upCommand()
    .exitOverride()
    .configureOutput({ writeErr: (s) => (err += s), writeOut: () => {} })
    .action(() => {});
  try {
    await command.parseAsync(args, { from: "user" });
    return null;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return err;
  }
}

describe("awaken up --image-build-lease-s", () => {
  it("--help documents it with its default", () => {
    const help = upCommand().configureHelp({ helpWidth: 400 }).helpInformation();
    expect(help).toMatch(/--image-build-lease-s <s> +image build lease: .*lapses \(default: 60\)/);
  });

  it("refuses zero, negatives, fractions, non-numbers, empty and absurdly large values, naming the option", async () => {
    for (const bad of ["0", "1", "-5", "2.5", "abc", "", " ", "3601", "99999999", "Infinity", "NaN"]) {
      expect(await refusal([`--image-build-lease-s=${bad}`]), bad).toContain(
        "--image-build-lease-s must be an integer from 2 to 3600",
      );
    }
  });

  it("takes a value within bounds, and defaults to 60 s", async () => {
    for (const good of ["2", "4", "60", "3600"])
      expect(await refusal(["--image-build-lease-s", good])).toBeNull();
    const command = upCommand()
      .exitOverride()
      .action(() => {});
    await command.parseAsync(["--image-build-lease-s", "4"], { from: "user" });
    expect(command.opts().imageBuildLeaseS).toBe(4);
    const defaulted = upCommand()
      .exitOverride()
      .action(() => {});
    await defaulted.parseAsync([], { from: "user" });
    expect(defaulted.opts().imageBuildLeaseS * 1000).toBe(DEFAULT_BUILD_LEASE_MS);
  });

  it("the service refuses a lease out of bounds (an embedding caller has no CLI to check it)", () => {
    const store = {} as never;
    const clock = { now: () => 0 };
    for (const bad of [0, -1, 1_999, 2_500.5, 3_600_001, Number.NaN])
      expect(() => new ImageBuildService(store, clock, bad), String(bad)).toThrow(/from 2000 to 3600000 ms/);
    expect(new ImageBuildService(store, clock, 4_000).leaseMs).toBe(4_000);
    expect(new ImageBuildService(store, clock).leaseMs).toBe(60_000);
  });
});
