import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { readSkillBundle, SKILL_MD_LIMIT } from "../../src/console/api/skillBundle.js";

const text = (value: string) => new TextEncoder().encode(value);

describe("readSkillBundle", () => {
  it("lists every file and reads the skill's own SKILL.md, not a nested one", () => {
    const zip = zipSync({
      "pdf-tools/SKILL.md": text("---\nname: pdf-tools\n---\n<script>alert(1)</script>"),
      "pdf-tools/scripts/run.py": text("print(1)"),
      "pdf-tools/docs/SKILL.md": text("not this one"),
    });
    const bundle = readSkillBundle(zip);
    expect(bundle.files.map((file) => file.path).sort()).toEqual([
      "pdf-tools/SKILL.md",
      "pdf-tools/docs/SKILL.md",
      "pdf-tools/scripts/run.py",
    ]);
    expect(bundle.files.find((file) => file.path === "pdf-tools/scripts/run.py")?.sizeBytes).toBe(8);
    expect(bundle.skillMd).toBe("---\nname: pdf-tools\n---\n<script>alert(1)</script>");
    expect(bundle.skillMdProblem).toBeNull();
  });

  it("does not inflate a SKILL.md over the limit, nor any other file", () => {
    const zip = zipSync({
      "big/SKILL.md": new Uint8Array(SKILL_MD_LIMIT + 1),
      "big/blob.bin": new Uint8Array(4 * 1024 * 1024),
    });
    const bundle = readSkillBundle(zip);
    expect(bundle.skillMd).toBeNull();
    expect(bundle.skillMdProblem).toContain("over");
    expect(bundle.files).toHaveLength(2);
  });

  it("says so when the bundle has no SKILL.md", () => {
    const bundle = readSkillBundle(zipSync({ "x/README.md": text("hi") }));
    expect(bundle.skillMd).toBeNull();
    expect(bundle.skillMdProblem).toBe("no SKILL.md in the bundle");
  });
});
