import { describe, expect, it } from "vitest";
import { isPackageRequirement, packageRequirementProblem } from "../../src/kernel/packageRequirements.js";

const NPM_ACCEPTED = [
  "lodash",
  "lodash@4.17.21",
  "lodash@^4.17.0",
  "lodash@~4.17",
  "lodash@4.x",
  "lodash@*",
  "lodash@latest",
  "lodash@next",
  "lodash@>=1.2.3 <2.0.0",
  "lodash@>= 1.2.3",
  "lodash@1.2.3 - 2.3.4",
  "lodash@1.x || >=2.5.0 || 5.0.0 - 7.2.3",
  "lodash@1.0.0-rc.1+build.5",
  "lodash@v1.2.3",
  "@types/node",
  "@types/node@^24",
  "@anthropic-ai/sdk@0.80.0",
  "JSONStream",
  "socket.io",
  "left-pad@1.3.0",
  "a",
  `${"a".repeat(214)}`,
];

const NPM_REFUSED = [
  "",
  "--offline",
  "--ignore-scripts=false",
  "-g",
  "-",
  "/path/evil-1.0.0.tgz",
  "./evil",
  "../evil",
  "~/evil",
  "evil.tgz",
  "evil.tar.gz",
  "evil.tar",
  "lodash@1.0.0-x.tgz",
  "file:../evil",
  "file:evil",
  "npm:lodash@1",
  "alias@npm:lodash@1",
  "git+https://github.com/a/b.git",
  "git://github.com/a/b",
  "github:a/b",
  "a/b",
  "a/b#main",
  "https://example.com/x.tgz",
  "http://127.0.0.1:9/x",
  "lodash@https://example.com/x.tgz",
  "lodash@file:../x",
  "lodash@github:a/b",
  "lodash@",
  "lodash@ 1.2.3",
  "@scope",
  "@scope/",
  "@Scope/name",
  "@scope/name/extra",
  ".hidden",
  "_private",
  "node_modules",
  "favicon.ico",
  "~tilde",
  "with space",
  "lodash\n--ignore-scripts=false",
  "C:\\evil",
  "lodash@1.2.3;rm",
  "lodash@$(id)",
  `${"a".repeat(215)}`,
];

const PIP_ACCEPTED = [
  "requests",
  "requests==2.31.0",
  "requests>=2.31,<3",
  "requests >= 2.31 , < 3",
  "requests~=2.31",
  "requests!=2.30.*",
  "requests==2.*",
  "requests===2.31.0",
  "requests[socks]",
  "requests[socks,security]>=2",
  "requests [socks] (>=2.0)",
  "Django==5.0rc1",
  "numpy==2.0.0.post1",
  "numpy==2.0.0.dev3",
  "numpy==1!2.0",
  "torch==2.3.0+cpu",
  "zope.interface",
  "backports.zoneinfo",
  "typing_extensions",
  "a",
];

const PIP_REFUSED = [
  "",
  "--no-index",
  "-r",
  "-e",
  "-c/etc/passwd",
  "/data/master.key",
  "./pkg",
  "../pkg",
  "~/pkg",
  "pkg.whl",
  "evil-1.0-py3-none-any.whl",
  "evil.zip",
  "evil.tar.gz",
  "evil==1.0+local.zip",
  "file:///etc/passwd",
  "https://example.com/x.whl",
  "git+https://github.com/a/b",
  "name @ https://example.com/x.whl",
  "name@file:///etc/passwd",
  "name; python_version < '3.8'",
  "name==1.0; os_name == 'posix'",
  "-name",
  "name-",
  ".name",
  "name==",
  "name=1.0",
  "name==1.0\n-r /etc/passwd",
  "name[extra",
  "name[--opt]",
  "name==$(id)",
  " name",
  "name ",
];

describe("package requirement grammar", () => {
  it.each(NPM_ACCEPTED)("npm accepts %j", (entry) => {
    expect(isPackageRequirement("npm", entry)).toBe(true);
  });
  it.each(NPM_REFUSED)("npm refuses %j", (entry) => {
    expect(isPackageRequirement("npm", entry)).toBe(false);
  });
  it.each(PIP_ACCEPTED)("pip accepts %j", (entry) => {
    expect(isPackageRequirement("pip", entry)).toBe(true);
  });
  it.each(PIP_REFUSED)("pip refuses %j", (entry) => {
    expect(isPackageRequirement("pip", entry)).toBe(false);
  });

  it("no accepted entry of either grammar starts like an option or contains a path, URL or newline", () => {
    // Property over generated entries: whatever passes can be neither an option nor a location.
    const pieces = ["-", "--", "/", ".", "~", ":", "@", "a", "1", "x", "^", "=", ">", " ", "\n", "[", "]"];
    let checked = 0;
    for (const a of pieces)
      for (const b of pieces)
        for (const c of pieces)
          for (const d of pieces) {
            const entry = `${a}${b}${c}${d}`;
            for (const manager of ["npm", "pip"] as const) {
              checked += 1;
              if (!isPackageRequirement(manager, entry)) continue;
              expect(entry).not.toMatch(/^[-.~ ]|\/\/|:|\n/);
              if (manager === "pip") expect(entry).not.toMatch(/[/@]/);
              else expect(entry.replace(/^@[a-z0-9][a-z0-9._~-]*\//, "")).not.toMatch(/\//);
            }
          }
    expect(checked).toBe(2 * pieces.length ** 4);
  });

  it("answers at once on long adversarial entries (no catastrophic backtracking)", () => {
    const hostile = [
      `a==${"1.".repeat(126)}x`,
      `a@${"1.2.3 ".repeat(42)}!`,
      `a@${"1.x || ".repeat(30)}|`,
      `a==1${"-1".repeat(126)}!`,
      `a==1${".post".repeat(50)}!`,
      `@s/${"a-".repeat(120)}@${"1-".repeat(60)}!`,
    ];
    const started = performance.now();
    for (const entry of hostile) {
      isPackageRequirement("npm", entry);
      isPackageRequirement("pip", entry);
    }
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("names the first entry outside its grammar, with its manager and index", () => {
    expect(packageRequirementProblem({ npm: ["lodash", "left-pad@1"], pip: ["requests"] })).toBeNull();
    expect(
      packageRequirementProblem({ npm: ["--offline", "--ignore-scripts=false", "/path/evil-1.0.0.tgz"] }),
    ).toBe(
      'config.packages.npm[0]: "--offline" is not a package requirement (expected name or ' +
        "name@version-range, e.g. lodash or @types/node@^24); options, paths, URLs, VCS and local " +
        "files are not accepted",
    );
    expect(packageRequirementProblem({ npm: ["ok"], pip: ["requests", "-r", "/d/master.key"] })).toMatch(
      /^config\.packages\.pip\[1\]: "-r" is not a package requirement \(expected name/,
    );
    // apt, cargo, gem and go lists are never installed by the server: no grammar applies.
    const others = { apt: ["--anything"], go: ["/x"], npm: [] };
    expect(packageRequirementProblem(others)).toBeNull();
  });
});
