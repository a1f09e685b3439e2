import { describe, expect, it } from "vitest";
import { memoryLimitsFrom } from "../../src/resources/memory/memoryLimits.js";
import {
  ancestorPaths,
  listedAs,
  memoryPathProblem,
  pathPrefixProblem,
} from "../../src/resources/memory/memoryPaths.js";

describe("memory paths", () => {
  it("accepts rooted, NFC, segment-bounded paths and names what is wrong with any other", () => {
    for (const ok of [
      "/a",
      "/notes/todo.md",
      "/Ünïcödé/ファイル.md",
      "/a b/c-d_e.f",
      `/${"x".repeat(255)}`,
    ]) {
      expect(memoryPathProblem(ok)).toBeNull();
    }
    expect(memoryPathProblem("a/b")).toMatch(/start with \//);
    expect(memoryPathProblem("/a/../b")).toMatch(/\.\./);
    expect(memoryPathProblem("/a/b/..")).toMatch(/\.\./);
    expect(memoryPathProblem("/./a")).toMatch(/\./);
    expect(memoryPathProblem("//a")).toMatch(/empty segment/);
    expect(memoryPathProblem("/a\u0000")).toMatch(/control/);
    expect(memoryPathProblem("/a\u200bb")).toMatch(/format/);
    expect(memoryPathProblem("/a\ud800")).toMatch(/control or format/);
    expect(memoryPathProblem("/a\\..\\b")).toMatch(/backslash/);
    expect(memoryPathProblem("/e\u0301")).toMatch(/Form C/);
    expect(memoryPathProblem(`/${"é".repeat(600)}`)).toMatch(/1201 bytes/);
  });

  it("a list prefix is / or a valid path ending with /", () => {
    expect(pathPrefixProblem("/")).toBeNull();
    expect(pathPrefixProblem("/notes/")).toBeNull();
    expect(pathPrefixProblem("/notes")).toMatch(/end with \//);
    expect(pathPrefixProblem("/../")).toMatch(/\.\./);
    expect(pathPrefixProblem("//")).toMatch(/empty segment/);
  });

  it("rolls deeper memories up into a directory marker at the listing depth", () => {
    expect(ancestorPaths("/a/b/c.md")).toEqual(["/a", "/a/b"]);
    expect(listedAs("/a/b/c.md", "/", 0)).toEqual({ prefix: false, path: "/a/b/c.md" });
    expect(listedAs("/a/b/c.md", "/", 1)).toEqual({ prefix: true, path: "/a/" });
    expect(listedAs("/a/b/c.md", "/", 2)).toEqual({ prefix: true, path: "/a/b/" });
    expect(listedAs("/a/b/c.md", "/a/", 2)).toEqual({ prefix: false, path: "/a/b/c.md" });
  });
});

describe("memory limits", () => {
  it("defaults to 100 kB and 10,000 memories; refuses anything but a whole number in range", () => {
    expect(memoryLimitsFrom({})).toEqual({ maxContentBytes: 102_400, maxMemoriesPerStore: 10_000 });
    expect(memoryLimitsFrom({ AWAKEN_MEMORY_MAX_BYTES: "4096", AWAKEN_MEMORY_MAX_PER_STORE: "7" })).toEqual({
      maxContentBytes: 4096,
      maxMemoriesPerStore: 7,
    });
    for (const bad of ["0", "-1", "1.5", "1e5", "abc", "99999999999"]) {
      expect(() => memoryLimitsFrom({ AWAKEN_MEMORY_MAX_BYTES: bad })).toThrow(/AWAKEN_MEMORY_MAX_BYTES/);
    }
    expect(() => memoryLimitsFrom({ AWAKEN_MEMORY_MAX_PER_STORE: "ten" })).toThrow(
      /AWAKEN_MEMORY_MAX_PER_STORE/,
    );
  });
});
