import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  ENVIRONMENT_PREAMBLE,
  environmentPreamble,
  PREAMBLE_NAME,
} from "../../src/sandbox/processEnvironment.js";

/** Runs the preamble in a real bash with an empty environment, the way a bwrap sandbox runs it. */
function runPreamble(env: Record<string, string>, argv: string[], rest = "") {
  const input = Buffer.concat([environmentPreamble(env), Buffer.from(rest)]);
  return spawnSync("/bin/bash", ["-c", ENVIRONMENT_PREAMBLE, PREAMBLE_NAME, ...argv], {
    input,
    env: {},
    encoding: "utf8",
  });
}

describe("the environment preamble of a sandboxed process", () => {
  it("exports every variable as given (spaces, newlines, '=', UTF-8) and leaves the rest of stdin to the process", () => {
    const env = { A: "x y\nz", B: "", C: "k=v=w", D: "ünï" };
    const out = runPreamble(
      env,
      ["/bin/bash", "-c", 'printf "%s|%s|%s|%s|" "$A" "$B" "$C" "$D"; cat'],
      "stdin rest\n",
    );
    expect(out.status).toBe(0);
    expect(out.stdout).toBe("x y\nz||k=v=w|ünï|stdin rest\n");
  });

  it("runs argv as it is: an option-looking first entry is a program name, not an option of exec", () => {
    const out = runPreamble({}, ["-c", "echo injected"]);
    expect(out.status).toBe(127);
    expect(out.stdout).toBe("");
  });

  it("refuses names that are not variable names and values with NUL, before anything is written", () => {
    expect(() => environmentPreamble({ "A-B": "x" })).toThrow(/not a variable name/);
    expect(() => environmentPreamble({ "A=B": "x" })).toThrow(/not a variable name/);
    expect(() => environmentPreamble({ A: "x\0y" })).toThrow(/NUL/);
  });

  it("a stdin that is not a preamble starts nothing", () => {
    const out = spawnSync("/bin/bash", ["-c", ENVIRONMENT_PREAMBLE, PREAMBLE_NAME, "/bin/echo", "ran"], {
      input: "not a count\0",
      env: {},
      encoding: "utf8",
    });
    expect(out.status).toBe(125);
    expect(out.stdout).toBe("");
  });
});
