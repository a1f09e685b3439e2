import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { environmentPreamble, preambleArgv } from "../../src/sandbox/processEnvironment.js";

/**
 * Runs the preamble in a real bash with an empty environment (or `outer`), the way a bwrap sandbox
 * runs it. Its stdin is a socketpair, as the sandbox's is.
 */
function runPreamble(env: Record<string, string>, argv: string[], rest = "", outer: NodeJS.ProcessEnv = {}) {
  const input = Buffer.concat([environmentPreamble(env), Buffer.from(rest)]);
  const [bash, ...args] = preambleArgv("/bin/bash", argv);
  return spawnSync(bash as string, args, { input, env: outer, encoding: "utf8" });
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

  it("reads no startup file and takes no function from its environment: a planted exec hook never sees the variables", () => {
    const home = mkdtempSync(join(tmpdir(), "preamble-home-"));
    try {
      const stolen = join(home, "stolen.txt");
      const hook = `exec() { env > ${stolen}; builtin exec "$@"; }\n`;
      for (const file of [".bashrc", ".profile", ".bash_profile", "bash_env"]) {
        writeFileSync(join(home, file), `touch ${join(home, `sourced${file}`)}\n${hook}`);
      }
      const out = runPreamble({ TOKEN: "s3cret-value" }, ["/bin/sh", "-c", 'echo "token=$TOKEN"'], "", {
        HOME: home,
        BASH_ENV: join(home, "bash_env"),
        ENV: join(home, "bash_env"),
        "BASH_FUNC_exec%%": `() { env > ${stolen}; builtin exec "$@"; }`,
      });
      expect(out.stderr).toBe("");
      expect(out.stdout).toBe("token=s3cret-value\n");
      expect(existsSync(stolen)).toBe(false);
      for (const file of [".bashrc", ".profile", ".bash_profile", "bash_env"]) {
        expect(existsSync(join(home, `sourced${file}`)), file).toBe(false);
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("a stdin that is not a preamble starts nothing", () => {
    const [bash, ...args] = preambleArgv("/bin/bash", ["/bin/echo", "ran"]);
    const out = spawnSync(bash as string, args, {
      input: "not a count\0",
      env: {},
      encoding: "utf8",
    });
    expect(out.status).toBe(125);
    expect(out.stdout).toBe("");
  });
});
