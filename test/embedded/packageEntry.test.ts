/**
 * The package's main entry, as a user imports it: `import { openAwaken } from "awaken-agents"`
 * resolved through `exports` to the built files (with their `.d.ts`), and the README's embedded
 * example run word for word. The example's process ends on its own: `close()` leaves no handle.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = `${ROOT}examples/embedded.mjs`;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-embedded-pkg-"));
  dirs.push(dir);
  return dir;
}

describe("the package entry", () => {
  it("exports openAwaken and ships its declarations", () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8"));
    const entry = pkg.exports["."];
    expect(existsSync(join(ROOT, entry.import))).toBe(true);
    expect(readFileSync(join(ROOT, entry.types), "utf8")).toContain("openAwaken");
    expect(pkg.bin.awaken).toBe("bin/awaken.js");
  });

  it("resolves by the package's name from a script inside it", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const m = await import("awaken-agents"); console.log(typeof m.openAwaken);',
      ],
      { cwd: ROOT, timeout: 20_000 },
    );
    expect(stdout.trim()).toBe("function");
  });

  it("the README's embedded example is the example file, word for word", () => {
    expect(readFileSync(`${ROOT}README.md`, "utf8")).toContain(readFileSync(EXAMPLE, "utf8").trim());
  });

  it("the example runs a custom-tool turn in process and its process exits after close()", async () => {
    const dataDir = join(scratch(), "data");
    const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, AWAKEN_DATA_DIR: dataDir },
      timeout: 30_000,
    });
    const types = stdout.trim().split("\n");
    expect(types[0]).toBe("user.message");
    expect(types).toContain("agent.custom_tool_use");
    expect(types).toContain("user.custom_tool_result");
    expect(types.at(-1)).toBe("session.status_idle");
  }, 40_000);
});
