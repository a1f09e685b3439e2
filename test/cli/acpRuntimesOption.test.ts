/**
 * `--acp-runtimes <file>` (or AWAKEN_ACP_RUNTIMES_FILE) on `awaken up`, `awaken control` and
 * `awaken worker`: a bad file stops the start-up before anything listens or connects, naming the
 * file and the field. Runs the built CLI (dist/) as an operator would.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runAwaken } from "../support/awakenCli.js";

const dir = mkdtempSync(join(tmpdir(), "awaken-acp-option-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bad = join(dir, "runtimes.json");
writeFileSync(
  bad,
  JSON.stringify({
    runtimes: [
      {
        name: "house",
        description: "x",
        command: ["house"],
        package: { manager: "npm", name: "house", version: "^1.0.0" },
        env: {},
        memory_file: "AGENTS.md",
      },
    ],
  }),
);
const REFUSAL = `--acp-runtimes: ${bad}: runtimes[0].package.version: "^1.0.0" is not one exact npm version`;

describe("--acp-runtimes", () => {
  it("stops awaken up on a bad file, from the flag or the variable", async () => {
    const flag = await runAwaken([
      "up",
      "--port",
      "0",
      "--data-dir",
      join(dir, "up1"),
      "--acp-runtimes",
      bad,
    ]);
    expect(flag.code).not.toBe(0);
    expect(flag.stderr).toContain(REFUSAL);
    expect(flag.stdout).not.toContain("listening");
    const variable = await runAwaken(["up", "--port", "0", "--data-dir", join(dir, "up2")], {
      AWAKEN_ACP_RUNTIMES_FILE: bad,
    });
    expect(variable.code).not.toBe(0);
    expect(variable.stderr).toContain(REFUSAL);
  });

  it("stops awaken control and awaken worker on a bad file", async () => {
    const control = await runAwaken(
      [
        "control",
        "--data-dir",
        join(dir, "control"),
        "--coordinator-url",
        "http://127.0.0.1:9",
        "--acp-runtimes",
        bad,
      ],
      { AWAKEN_CONTROL_TOKEN: "c".repeat(40) },
    );
    expect(control.code).not.toBe(0);
    expect(control.stderr).toContain(REFUSAL);
    const worker = await runAwaken(
      ["worker", "--coordinator-url", "http://127.0.0.1:9", "--acp-runtimes", bad],
      {
        AWAKEN_WORKER_TOKEN: "w".repeat(20),
      },
    );
    expect(worker.code).not.toBe(0);
    expect(worker.stderr).toContain(REFUSAL);
  });
});
