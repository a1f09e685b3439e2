import { betaAgentToolset20260401 } from "@anthropic-ai/sdk/tools/agent-toolset/node";
import { describe, expect, it } from "vitest";
import { anchorPath, keepWholeLines, wholeLines } from "../../src/runtime/hand/common.js";
import { applyEdit } from "../../src/runtime/hand/edit.js";
import { expandBraces, globPatterns } from "../../src/runtime/hand/glob.js";
import { grepLines } from "../../src/runtime/hand/grep.js";
import { HAND_TOOLS } from "../../src/runtime/hand/index.js";
import { parseViewRange } from "../../src/runtime/hand/read.js";

describe("the Hand tools' contract", () => {
  it("takes exactly the input shapes of the SDK's own toolset, so one prompt works on both", () => {
    const sdk = betaAgentToolset20260401({ workdir: "/nonexistent" });
    expect([...HAND_TOOLS.keys()].sort()).toEqual(sdk.map((tool) => tool.name).sort());
    const shape = (schema: Record<string, unknown>) => ({
      required: ((schema.required as string[] | undefined) ?? []).slice().sort(),
      properties: Object.fromEntries(
        Object.entries(schema.properties as Record<string, { type: string; items?: unknown }>).map(
          ([name, p]) => [name, { type: p.type, items: p.items }],
        ),
      ),
    });
    for (const tool of sdk) {
      const ours = HAND_TOOLS.get(tool.name);
      expect(shape(ours?.spec.input_schema ?? {}), tool.name).toEqual(
        shape((tool as { input_schema: Record<string, unknown> }).input_schema),
      );
    }
  });

  it("declares honestly which tools are safe to run twice", () => {
    const repeatable = Object.fromEntries([...HAND_TOOLS].map(([name, tool]) => [name, tool.repeatable]));
    expect(repeatable).toEqual({ bash: false, read: true, write: true, edit: false, glob: true, grep: true });
  });
});

describe("input helpers", () => {
  it("anchors relative paths so no command reads them as options, assignments or stdin", () => {
    expect(anchorPath("-x")).toBe("./-x");
    expect(anchorPath("a=b")).toBe("./a=b");
    expect(anchorPath("-")).toBe("./-");
    expect(anchorPath("/etc/hosts")).toBe("/etc/hosts");
  });

  it("view_range: [start, end] 1-indexed inclusive, end ≤ 0 to the end, nothing = the whole file", () => {
    expect(parseViewRange(undefined)).toEqual({ first: 1, last: 0 });
    expect(parseViewRange([])).toEqual({ first: 1, last: 0 });
    expect(parseViewRange([2, 4])).toEqual({ first: 2, last: 4 });
    expect(parseViewRange([3, -1])).toEqual({ first: 3, last: 0 });
    expect(parseViewRange([0, 2])).toEqual({ first: 1, last: 2 });
    expect(() => parseViewRange([5, 2])).toThrow(/ends before it starts/);
    expect(() => parseViewRange([1])).toThrow(/\[start_line, end_line\]/);
    expect(() => parseViewRange("1-2")).toThrow(/\[start_line, end_line\]/);
    expect(() => parseViewRange([1.5, 2])).toThrow(/\[start_line, end_line\]/);
  });
});

describe("output helpers", () => {
  it("drops a last line cut short, unless it is the only one", () => {
    expect(wholeLines("a\nb\n")).toEqual({ kept: "a\nb\n", partialLine: false });
    expect(wholeLines("a\nbb")).toEqual({ kept: "a\n", partialLine: false });
    expect(wholeLines("aaaa")).toEqual({ kept: "aaaa", partialLine: true });
  });

  it("keeps at most N bytes, cut after a whole line, counting UTF-8 bytes", () => {
    expect(keepWholeLines("ab\ncd\n", 10)).toEqual({ kept: "ab\ncd\n", cut: false });
    expect(keepWholeLines("ab\ncd\nef\n", 7)).toEqual({ kept: "ab\ncd\n", cut: true });
    // "é" is two bytes: 3 lines of 3 bytes each.
    expect(keepWholeLines("é\né\né\n", 8)).toEqual({ kept: "é\né\n", cut: true });
  });

  it("grep lines: sorted by path (stable), operand prefix dropped, long lines cut, at most N lines", () => {
    const out = "./b\u00002:yyyyyy\n./a:x\u00001:x\n./b\u00001:z\n";
    expect(grepLines(out, { stripPrefix: "./", maxLines: 2, maxLineChars: 8 })).toEqual({
      lines: ["a:x:1:x", "b:2:yyyy [line cut]"],
      more: true,
    });
    expect(grepLines(out, { stripPrefix: "", maxLines: 5, maxLineChars: 100 })).toEqual({
      lines: ["./a:x:1:x", "./b:2:yyyyyy", "./b:1:z"],
      more: false,
    });
  });
});

describe("edit: exact replacement", () => {
  it("replaces a unique occurrence, inserting $-patterns literally", () => {
    expect(applyEdit("a TODO b", "f", "TODO", "$& done", false)).toEqual({
      updated: "a $& done b",
      replacements: 1,
    });
  });

  it("refuses a missing string and a repeated one unless replace_all, naming the count", () => {
    expect(applyEdit("abc", "f", "x", "y", false)).toEqual({ error: "old_string not found in f" });
    const repeated = applyEdit("x x x", "f", "x", "y", false);
    expect("error" in repeated && repeated.error).toMatch(
      /^old_string appears 3 times in f \(must be unique\)/,
    );
    expect(applyEdit("x x x", "f", "x", "y", true)).toEqual({ updated: "y y y", replacements: 3 });
  });

  it("counts non-overlapping occurrences, as the replacement does", () => {
    expect(applyEdit("aaaa", "f", "aa", "b", true)).toEqual({ updated: "bb", replacements: 2 });
  });
});

describe("glob patterns", () => {
  it("expands {a,b} alternatives like bash, nested too; a lone {x} stays", () => {
    expect(expandBraces("*.{ts,js}")).toEqual(["*.ts", "*.js"]);
    expect(expandBraces("{src,test}/**/*.{ts,tsx}")).toEqual([
      "src/**/*.ts",
      "src/**/*.tsx",
      "test/**/*.ts",
      "test/**/*.tsx",
    ]);
    expect(expandBraces("a{b,c{d,e}}f")).toEqual(["abf", "acdf", "acef"]);
    expect(expandBraces("{x}.ts")).toEqual(["{x}.ts"]);
    expect(expandBraces("a\\{b,c}")).toEqual(["a\\{b,c}"]);
    expect(expandBraces("{a,b")).toEqual(["{a,b"]);
  });

  it("refuses absolute patterns and `..`, also inside alternatives, and huge expansions", () => {
    expect(globPatterns("./src//*.ts")).toEqual(["src/*.ts"]);
    expect(() => globPatterns("/etc/*")).toThrow(/absolute pattern not permitted/);
    expect(() => globPatterns("{x,/etc/*}")).toThrow(/absolute pattern not permitted/);
    expect(() => globPatterns("a/../../*")).toThrow(/".." is not permitted/);
    expect(() => globPatterns("{a,..}/*")).toThrow(/".." is not permitted/);
    expect(() => globPatterns("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}")).toThrow(/more than 64 alternatives/);
    // `..` inside a name is not a parent directory.
    expect(globPatterns("a..b/*")).toEqual(["a..b/*"]);
  });
});
