/**
 * The operator's ACP runtime file: a good file parses to definitions; each bad field is refused
 * with an error naming the file and the field; the shipped definitions pass the same schema; the
 * catalog puts the operator's after the shipped ones, replacing one by name.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acpRuntimeCatalog, acpRuntimeCatalogFrom } from "../../src/brains/catalog.js";
import { parseAcpRuntimeFile, readAcpRuntimeFile } from "../../src/brains/runtimeFile.js";
import { SHIPPED_ACP_RUNTIMES } from "../../src/brains/shippedRuntimes.js";

const SOURCE = "/etc/awaken/runtimes.json";

function runtime(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "house",
    description: "The house harness",
    command: ["house-acp", "--stdio"],
    package: { manager: "npm", name: "@example/house-acp", version: "2.0.1" },
    env: { HOUSE_API_KEY: { vault_secret: "HOUSE_API_KEY" }, HOUSE_MODE: "quiet" },
    memory_file: "HOUSE.md",
    ...overrides,
  };
}

const parse = (file: unknown) => parseAcpRuntimeFile(JSON.stringify(file), SOURCE);
const parseOne = (overrides: Record<string, unknown>) => () => parse({ runtimes: [runtime(overrides)] });

const scratch = mkdtempSync(join(tmpdir(), "awaken-acp-file-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("parseAcpRuntimeFile", () => {
  it("parses a good file, pip packages included", () => {
    const pip = runtime({
      name: "py-agent",
      command: ["py-agent"],
      package: { manager: "pip", name: "py-agent", version: "0.4.0rc1" },
      env: {},
      memory_file: "AGENTS.md",
    });
    expect(parse({ runtimes: [runtime(), pip] })).toEqual([runtime(), pip]);
    expect(parse({ runtimes: [] })).toEqual([]);
  });

  it("names the file and the field of each bad one", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "House" }, "runtimes[0].name: expected lower-case letters"],
      [{ name: "" }, "runtimes[0].name: expected lower-case letters"],
      [{ description: "x\0y" }, "runtimes[0].description: must not contain a NUL"],
      [{ command: [] }, "runtimes[0].command: must name the program"],
      [{ command: ["house", "a\0b"] }, "runtimes[0].command[1]: must not contain a NUL"],
      [{ command: ["--help"] }, "runtimes[0].command[0]: must be a program name or path"],
      [{ command: [" house"] }, "runtimes[0].command[0]: must be a program name or path"],
      [
        { package: { manager: "cargo", name: "house", version: "1.0.0" } },
        'runtimes[0].package.manager: expected "npm" or "pip"',
      ],
      [
        { package: { manager: "npm", name: "../house", version: "1.0.0" } },
        'runtimes[0].package.name: "../house" is not a npm package name',
      ],
      [{ package: { manager: "npm", name: "house@1.0.0", version: "1.0.0" } }, "runtimes[0].package.name:"],
      [
        { package: { manager: "npm", name: "house", version: "^1.0.0" } },
        'runtimes[0].package.version: "^1.0.0" is not one exact npm version',
      ],
      [{ package: { manager: "npm", name: "house", version: "latest" } }, "runtimes[0].package.version:"],
      [
        { package: { manager: "pip", name: "house", version: ">=1.0" } },
        'runtimes[0].package.version: ">=1.0" is not one exact pip version',
      ],
      [{ package: { manager: "pip", name: "house", version: "1.*" } }, "runtimes[0].package.version:"],
      [{ package: { manager: "npm", name: "house" } }, "runtimes[0].package.version:"],
      [{ env: { house_key: "x" } }, "runtimes[0].env.house_key:"],
      [{ env: { "1KEY": "x" } }, "runtimes[0].env.1KEY:"],
      [{ env: { LD_PRELOAD: "/x.so" } }, "runtimes[0].env.LD_PRELOAD: LD_* variables"],
      [{ env: { KEY: "a\0b" } }, "runtimes[0].env.KEY:"],
      [
        { env: { KEY: { vault_secret: "bad-name" } } },
        "runtimes[0].env.KEY.vault_secret: expected a vault secret's name",
      ],
      [{ env: { KEY: { secret_name: "KEY" } } }, "runtimes[0].env.KEY:"],
      [{ env: { KEY: 1 } }, "runtimes[0].env.KEY:"],
      [{ memory_file: "docs/CLAUDE.md" }, "runtimes[0].memory_file: expected a plain file name"],
      [{ memory_file: ".." }, "runtimes[0].memory_file: expected a plain file name"],
      [{ memory_file: "a\\b.md" }, "runtimes[0].memory_file: expected a plain file name"],
      [{ memory_file: "" }, "runtimes[0].memory_file:"],
      [{ extra: true }, "runtimes[0]:"],
    ];
    for (const [overrides, message] of cases) {
      expect(parseOne(overrides), JSON.stringify(overrides)).toThrow(`--acp-runtimes: ${SOURCE}: ${message}`);
    }
    const missing = runtime();
    delete missing.memory_file;
    expect(() => parse({ runtimes: [missing] })).toThrow(
      `--acp-runtimes: ${SOURCE}: runtimes[0].memory_file:`,
    );
  });

  it("refuses a file of another shape, a name defined twice and text that is not JSON", () => {
    expect(() => parse({ runtimes: [runtime()], more: 1 })).toThrow(`--acp-runtimes: ${SOURCE}: (the file):`);
    expect(() => parse([runtime()])).toThrow(`--acp-runtimes: ${SOURCE}: (the file):`);
    expect(() => parse({ runtimes: [runtime(), runtime()] })).toThrow(
      `--acp-runtimes: ${SOURCE}: runtimes[1].name: "house" is defined more than once`,
    );
    expect(() => parseAcpRuntimeFile("{runtimes:", SOURCE)).toThrow(`--acp-runtimes: ${SOURCE} is not JSON`);
  });

  it("never echoes an env value in an error", () => {
    const secretish = "sk-not-echoed-value";
    expect(parseOne({ env: { lower: secretish } })).toThrow(/runtimes\[0\]\.env\.lower/);
    expect(parseOne({ env: { lower: secretish } })).not.toThrow(secretish);
  });

  it("reads a file from disk, naming a file it cannot read", () => {
    const path = join(scratch, "good.json");
    writeFileSync(path, JSON.stringify({ runtimes: [runtime()] }));
    expect(readAcpRuntimeFile(path)).toEqual([runtime()]);
    expect(() => readAcpRuntimeFile(join(scratch, "absent.json"))).toThrow(
      `--acp-runtimes: cannot read ${join(scratch, "absent.json")}: ENOENT`,
    );
  });
});

describe("the shipped runtimes", () => {
  it("are claude, codex, gemini and opencode, each valid under the operator file's own rules", () => {
    expect(SHIPPED_ACP_RUNTIMES.map((r) => r.name)).toEqual(["claude", "codex", "gemini", "opencode"]);
    expect(parse({ runtimes: SHIPPED_ACP_RUNTIMES })).toEqual(SHIPPED_ACP_RUNTIMES);
    const claude = SHIPPED_ACP_RUNTIMES[0];
    expect(claude).toMatchObject({
      command: ["claude-agent-acp"],
      package: { manager: "npm", name: "@zed-industries/claude-agent-acp" },
      env: { ANTHROPIC_API_KEY: { vault_secret: "ANTHROPIC_API_KEY" } },
      memory_file: "CLAUDE.md",
    });
  });
});

describe("acpRuntimeCatalog", () => {
  it("knows the shipped runtimes alone without a file", () => {
    const catalog = acpRuntimeCatalogFrom(undefined);
    expect(catalog.list().map((r) => r.name)).toEqual(["claude", "codex", "gemini", "opencode"]);
    expect(catalog.get("gemini")?.command).toEqual(["gemini", "--acp"]);
    expect(catalog.get("nope")).toBeNull();
    expect(acpRuntimeCatalogFrom("").list()).toHaveLength(4);
  });

  it("adds the operator's runtimes after the shipped ones and replaces one by name in its place", () => {
    const ownClaude = parse({ runtimes: [runtime({ name: "claude", command: ["my-claude"] })] })[0]!;
    const house = parse({ runtimes: [runtime()] })[0]!;
    const catalog = acpRuntimeCatalog([house, ownClaude]);
    expect(catalog.list().map((r) => r.name)).toEqual(["claude", "codex", "gemini", "opencode", "house"]);
    expect(catalog.get("claude")?.command).toEqual(["my-claude"]);
    expect(catalog.get("house")).toEqual(house);
  });

  it("reads the operator's file, and a bad one stops the catalog", () => {
    const path = join(scratch, "catalog.json");
    writeFileSync(path, JSON.stringify({ runtimes: [runtime()] }));
    expect(acpRuntimeCatalogFrom(path).get("house")?.memory_file).toBe("HOUSE.md");
    writeFileSync(path, JSON.stringify({ runtimes: [runtime({ memory_file: "/etc/passwd" })] }));
    expect(() => acpRuntimeCatalogFrom(path)).toThrow(`--acp-runtimes: ${path}: runtimes[0].memory_file:`);
  });
});
