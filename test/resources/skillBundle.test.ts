import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { AwakenError } from "../../src/kernel/errors.js";
import { skillArchive } from "../../src/resources/skills/skillArchive.js";
import { type UploadedSkillFile, validateSkillBundle } from "../../src/resources/skills/skillBundle.js";
import { skillContentDigest } from "../../src/resources/skills/skillDigest.js";
import {
  DEFAULT_SKILL_LIMITS,
  type SkillLimits,
  skillLimitsFromEnv,
} from "../../src/resources/skills/skillLimits.js";

// The bundle rules a skill upload meets before anything is stored, each refusal a 400 naming it.

const SKILL_MD = "---\nname: pdf-tools\ndescription: Fill and read PDF forms.\n---\n# PDF tools\n";
const file = (path: string, text: string): UploadedSkillFile => ({ path, bytes: strToU8(text) });
const bundle = (...extra: UploadedSkillFile[]) => [file("pdf-tools/SKILL.md", SKILL_MD), ...extra];

function refused(files: UploadedSkillFile[], fragment: RegExp, limits: SkillLimits = DEFAULT_SKILL_LIMITS) {
  let error: unknown;
  try {
    validateSkillBundle(files, limits);
  } catch (e) {
    error = e;
  }
  expect(error, `expected a refusal matching ${fragment}`).toBeInstanceOf(AwakenError);
  expect((error as AwakenError).code).toBe("invalid_request");
  expect((error as AwakenError).message).toMatch(fragment);
}

describe("skill bundle validation", () => {
  it("accepts files under one directory with SKILL.md: paths relative to the root, sorted", () => {
    const out = validateSkillBundle(
      [file("pdf-tools/scripts/fill.py", "print(1)"), ...bundle(file("pdf-tools/REFERENCE.md", "x"))],
      DEFAULT_SKILL_LIMITS,
    );
    expect(out.name).toBe("pdf-tools");
    expect(out.description).toBe("Fill and read PDF forms.");
    expect(out.files.map((f) => f.path)).toEqual(["REFERENCE.md", "SKILL.md", "scripts/fill.py"]);
  });

  it("takes the directory's name when the front matter has none, if it is kebab-case", () => {
    const md = "---\ndescription: d\n---\n";
    expect(validateSkillBundle([file("my-skill/SKILL.md", md)], DEFAULT_SKILL_LIMITS).name).toBe("my-skill");
    refused(
      [file("My Skill/SKILL.md", md)],
      /has no front matter name, and its directory "My Skill" is not kebab-case/,
    );
  });

  it.each([
    ["../evil/SKILL.md", /"\.\." segment/],
    ["pdf-tools/../../etc/passwd", /"\.\." segment/],
    ["/etc/pdf-tools/SKILL.md", /absolute path/],
    ["C:/pdf-tools/x", /absolute path/],
    ["pdf-tools\\x.py", /backslash/],
    ["pdf-tools/x\0.py", /control character/],
    ["pdf-tools//x.py", /empty path segment/],
    ["pdf-tools/./x.py", /"\." segment/],
    [`pdf-tools/${"a".repeat(256)}`, /segment longer than 255/],
    [`pdf-tools/${"a/".repeat(600)}x`, /longer than 1024/],
    ["loose.py", /not inside a directory/],
  ])("refuses the path %j", (path, fragment) => {
    refused(bundle(file(path, "x")), fragment);
  });

  it("refuses two top-level directories, a missing SKILL.md, duplicates and file/directory clashes", () => {
    refused(bundle(file("other/x.py", "x")), /one top-level directory: found "pdf-tools" and "other"/);
    refused([file("pdf-tools/scripts/SKILL.md", SKILL_MD)], /no SKILL.md at the root of "pdf-tools"/);
    refused(bundle(file("pdf-tools/SKILL.md", SKILL_MD)), /"pdf-tools\/SKILL.md" is uploaded twice/);
    refused(
      bundle(file("pdf-tools/a", "x"), file("pdf-tools/a/b", "y")),
      /"a" is both a file and a directory/,
    );
    refused([], /at least one file/);
  });

  it.each([
    ["# no front matter\n", /must begin with YAML front matter/],
    ["---\nname: x\n", /must begin with YAML front matter/],
    ["---\n- a\n- b\n---\n", /must be a YAML mapping/],
    ["---\nname: pdf-tools\n---\n", /description is required/],
    ["---\nname: pdf-tools\ndescription: ''\n---\n", /description is required/],
    ["---\nname: 7\ndescription: d\n---\n", /name must be a string/],
    ["---\nname: PDF_Tools\ndescription: d\n---\n", /"PDF_Tools" is not kebab-case/],
    [`---\nname: ${"a".repeat(65)}\ndescription: d\n---\n`, /name is longer than 64/],
    [`---\nname: pdf-tools\ndescription: ${"d".repeat(1025)}\n---\n`, /description is longer than 1024/],
    ["---\nname: pdf-tools\nname: again\ndescription: d\n---\n", /not valid YAML/],
    ["---\na: &x [1]\nb: *x\nname: pdf-tools\ndescription: d\n---\n", /not valid YAML/],
  ])("refuses the SKILL.md %j", (md, fragment) => {
    refused([file("pdf-tools/SKILL.md", md)], fragment);
  });

  it("refuses SKILL.md that is not UTF-8", () => {
    refused(
      [{ path: "pdf-tools/SKILL.md", bytes: new Uint8Array([0x2d, 0x2d, 0x2d, 0xff, 0xfe]) }],
      /not UTF-8/,
    );
  });

  it("bounds the file count, one file's size and the total", () => {
    const small: SkillLimits = { maxTotalBytes: 200, maxFileBytes: 120, maxFiles: 3 };
    refused(
      bundle(file("pdf-tools/a", "1"), file("pdf-tools/b", "2"), file("pdf-tools/c", "3")),
      /at most 3 files/,
      small,
    );
    refused(
      bundle(file("pdf-tools/big", "x".repeat(121))),
      /"pdf-tools\/big" is larger than 120 bytes/,
      small,
    );
    refused(
      bundle(file("pdf-tools/a", "x".repeat(100)), file("pdf-tools/b", "y".repeat(60))),
      /together are larger than 200/,
      small,
    );
  });
});

describe("zipped bundles", () => {
  const zipOf = (entries: Record<string, string>) =>
    zipSync(Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, strToU8(v)])));

  it("accepts one .zip holding the bundle (macOS metadata entries ignored)", () => {
    const archive = zipOf({
      "pdf-tools/SKILL.md": SKILL_MD,
      "pdf-tools/scripts/fill.py": "print(1)",
      "__MACOSX/pdf-tools/._SKILL.md": "junk",
    });
    const out = validateSkillBundle([{ path: "pdf-tools.zip", bytes: archive }], DEFAULT_SKILL_LIMITS);
    expect(out.files.map((f) => f.path)).toEqual(["SKILL.md", "scripts/fill.py"]);
  });

  it("refuses an archive bomb from its declared sizes, before inflating", () => {
    // 8 MiB of zeros compress to a few KB: the declared size is what is checked.
    const bomb = zipSync({
      "pdf-tools/SKILL.md": strToU8(SKILL_MD),
      "pdf-tools/zeros": new Uint8Array(8 * 1024 * 1024),
    });
    expect(bomb.byteLength).toBeLessThan(50_000);
    const oneMiB: SkillLimits = { maxTotalBytes: 1024 * 1024, maxFileBytes: 1024 * 1024, maxFiles: 1000 };
    refused(
      [{ path: "b.zip", bytes: bomb }],
      /"pdf-tools\/zeros" would expand to 8388608 bytes, more than the 1048576/,
      oneMiB,
    );
    const total: SkillLimits = { ...oneMiB, maxFileBytes: 1024 };
    const spread = zipOf({ "pdf-tools/SKILL.md": SKILL_MD, "pdf-tools/a": "x".repeat(1000) });
    refused([{ path: "b.zip", bytes: spread }], /would expand to more than 1000 bytes together/, {
      ...total,
      maxTotalBytes: 1000,
    });
    const many = zipOf(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`pdf-tools/f${i}`, "x"])));
    refused([{ path: "b.zip", bytes: many }], /more than 1000 files/);
  });

  it("refuses a zip that is not one, and traversal inside a zip", () => {
    refused([{ path: "b.zip", bytes: strToU8("not a zip at all") }], /not a readable zip/);
    refused(
      [{ path: "b.zip", bytes: zipOf({ "pdf-tools/SKILL.md": SKILL_MD, "../x": "y" }) }],
      /"\.\." segment/,
    );
  });
});

describe("digest and archive", () => {
  it("the content digest depends on the paths and file digests, not their order", () => {
    const a = [
      { path: "SKILL.md", digest: `sha256:${"1".repeat(64)}` },
      { path: "b.py", digest: `sha256:${"2".repeat(64)}` },
    ];
    const digest = skillContentDigest(a);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(skillContentDigest([...a].reverse())).toBe(digest);
    expect(skillContentDigest([a[0]!, { path: "c.py", digest: a[1]!.digest }])).not.toBe(digest);
  });

  it("the archive is the same bytes every time, the files under <name>/", () => {
    const files = [
      { path: "SKILL.md", bytes: strToU8(SKILL_MD) },
      { path: "scripts/fill.py", bytes: strToU8("print(1)") },
    ];
    const one = skillArchive("pdf-tools", files);
    expect(Buffer.from(skillArchive("pdf-tools", files)).equals(Buffer.from(one))).toBe(true);
    const back = unzipSync(one);
    expect(Object.keys(back)).toEqual(["pdf-tools/SKILL.md", "pdf-tools/scripts/fill.py"]);
    expect(strFromU8(back["pdf-tools/SKILL.md"]!)).toBe(SKILL_MD);
  });
});

describe("limits from the environment", () => {
  it("defaults to 30 MiB; a bad value stops start-up", () => {
    expect(skillLimitsFromEnv({})).toEqual(DEFAULT_SKILL_LIMITS);
    expect(skillLimitsFromEnv({ AWAKEN_SKILL_MAX_BYTES: "1000" })).toMatchObject({
      maxTotalBytes: 1000,
      maxFileBytes: 1000,
    });
    for (const bad of ["0", "-1", "1.5", "10MB", "1e9", " 5"]) {
      expect(() => skillLimitsFromEnv({ AWAKEN_SKILL_MAX_BYTES: bad })).toThrow(
        /AWAKEN_SKILL_MAX_BYTES must be a positive/,
      );
    }
    expect(() =>
      skillLimitsFromEnv({ AWAKEN_SKILL_MAX_BYTES: "10", AWAKEN_SKILL_MAX_FILE_BYTES: "11" }),
    ).toThrow(/exceeds AWAKEN_SKILL_MAX_BYTES/);
  });
});
