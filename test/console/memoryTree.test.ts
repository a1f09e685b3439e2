import { describe, expect, it } from "vitest";
import { formatBytes } from "../../src/console/pages/formatBytes.js";
import {
  actorLabel,
  nameBelow,
  parentPrefix,
  prefixCrumbs,
} from "../../src/console/projection/memoryTree.js";
import { routeOf } from "../../src/console/routes.js";

describe("the memory tree's paths", () => {
  it("trails from the root to a prefix", () => {
    expect(prefixCrumbs("/")).toEqual([{ label: "/", prefix: "/" }]);
    expect(prefixCrumbs("/notes/2026/")).toEqual([
      { label: "/", prefix: "/" },
      { label: "notes/", prefix: "/notes/" },
      { label: "2026/", prefix: "/notes/2026/" },
    ]);
  });

  it("names an item below the listed prefix, and finds a path's parent", () => {
    expect(nameBelow("/notes/", "/notes/todo.md")).toBe("todo.md");
    expect(nameBelow("/notes/", "/notes/2026/")).toBe("2026/");
    expect(nameBelow("/", "/a.md")).toBe("a.md");
    expect(nameBelow("/other/", "/notes/todo.md")).toBe("/notes/todo.md");
    expect(parentPrefix("/notes/todo.md")).toBe("/notes/");
    expect(parentPrefix("/todo.md")).toBe("/");
    expect(parentPrefix("/a/b/")).toBe("/a/");
  });

  it("names who made a change by id", () => {
    expect(actorLabel({ type: "api_actor", api_key_id: "apikey_1" })).toBe("API key apikey_1");
    expect(actorLabel({ type: "session_actor", session_id: "sesn_1" })).toBe("session sesn_1");
    expect(actorLabel(undefined)).toBe("not recorded");
  });
});

describe("the resource pages' routes", () => {
  it("reads files, skills, versions, stores and memories from the path", () => {
    expect(routeOf("files")).toEqual({ page: "files" });
    expect(routeOf("skills")).toEqual({ page: "skills" });
    expect(routeOf("skills/skill_1")).toEqual({ page: "skill", skillId: "skill_1" });
    expect(routeOf("skills/skill_1/versions/skillver_2")).toEqual({
      page: "skill",
      skillId: "skill_1",
      versionId: "skillver_2",
    });
    expect(routeOf("memory-stores")).toEqual({ page: "memory-stores" });
    expect(routeOf("memory-stores/memstore_1")).toEqual({ page: "memory-store", storeId: "memstore_1" });
    expect(routeOf("memory-stores/memstore_1/memories/mem_2")).toEqual({
      page: "memory-store",
      storeId: "memstore_1",
      memoryId: "mem_2",
    });
    expect(routeOf("skills/skill_1/other/x").page).toBe("not_found");
  });
});

describe("formatBytes", () => {
  it("is exact below a KiB and one decimal above", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5.0 MiB");
    expect(formatBytes(null)).toBe("—");
  });
});
