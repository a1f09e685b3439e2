/**
 * Resource mounts as a tier binds them: which sandbox paths are accepted (never over what the
 * sandbox is made of, never one inside another, host paths inside the root), and the bwrap flags
 * they become (read-only or writable, before the root is remounted read-only).
 */
import { describe, expect, it } from "vitest";
import { bwrapCommand, DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { type SandboxMounts, SandboxUnavailableError } from "../../src/sandbox/ports.js";
import { checkSandboxMounts, sameMounts, sandboxPathProblem } from "../../src/sandbox/resourceMounts.js";

const mounts: SandboxMounts = {
  hostRoot: "/srv/mounts/s-1",
  entries: [
    { sandboxPath: "/mnt/session/uploads/file_1", hostPath: "files/sesrsc_1", readOnly: true },
    { sandboxPath: "/mnt/memory/prefs", hostPath: "memory/memstore_1", readOnly: false },
  ],
};

describe("sandbox mount paths", () => {
  it("accepts absolute, normalized paths outside the sandbox's own directories", () => {
    for (const path of ["/mnt/skills/pdf", "/mnt/session/uploads/x.csv", "/data/reports"])
      expect(sandboxPathProblem(path)).toBeNull();
  });

  it("refuses the root, relative, unnormalized, NUL-carrying, overlong and reserved paths", () => {
    for (const path of [
      "/",
      "",
      "mnt/x",
      "/mnt/../etc/passwd",
      "/mnt//x",
      "/mnt/x/",
      "/mnt/./x",
      "/mnt/x\0y",
      `/mnt/${"x".repeat(1100)}`,
      "/workspace/x",
      "/workspace",
      "/proc/self",
      "/etc/shadow",
      "/usr/bin/env",
      "/tmp/x",
      "/dev/shm",
      "/opt/awaken/packages",
      "/run/x",
    ])
      expect(sandboxPathProblem(path), path).not.toBeNull();
  });

  it("refuses two mounts at or under one another, and host paths that leave the root", () => {
    const check =
      (entries: SandboxMounts["entries"], hostRoot = "/srv/m") =>
      () =>
        checkSandboxMounts("bwrap", { hostRoot, entries });
    expect(check(mounts.entries, mounts.hostRoot)).not.toThrow();
    expect(
      check([
        { sandboxPath: "/mnt/a", hostPath: "x", readOnly: true },
        { sandboxPath: "/mnt/a/b", hostPath: "y", readOnly: true },
      ]),
    ).toThrow(/overlap/);
    expect(
      check([
        { sandboxPath: "/mnt/a", hostPath: "x", readOnly: true },
        { sandboxPath: "/mnt/a", hostPath: "y", readOnly: true },
      ]),
    ).toThrow(SandboxUnavailableError);
    for (const hostPath of ["../x", "/etc", "a/../../x", ".", "a//b"])
      expect(check([{ sandboxPath: "/mnt/a", hostPath, readOnly: true }]), hostPath).toThrow(
        /inside the root/,
      );
    expect(check([], "relative/root")).toThrow(/host root/);
  });

  it("knows the same mount set from a changed one", () => {
    expect(sameMounts(mounts, { ...mounts, entries: [...mounts.entries] })).toBe(true);
    expect(sameMounts(undefined, mounts)).toBe(false);
    expect(
      sameMounts(mounts, {
        ...mounts,
        entries: [mounts.entries[0]!, { ...mounts.entries[1]!, readOnly: true }],
      }),
    ).toBe(false);
  });
});

describe("bwrapCommand with mounts", () => {
  const { args } = bwrapCommand({
    bashPath: "/usr/bin/bash",
    prlimitPath: "/usr/bin/prlimit",
    bwrapPath: "/usr/bin/bwrap",
    limits: DEFAULT_LIMITS,
    systemEntries: [],
    workspaceHostPath: "/srv/workspaces/s-1",
    mounts,
    argv: ["true"],
  });

  it("binds read-only content with --ro-bind and writable stores with --bind, before / is remounted read-only", () => {
    const ro = args.indexOf("/srv/mounts/s-1/files/sesrsc_1");
    expect(args.slice(ro - 1, ro + 2)).toEqual([
      "--ro-bind",
      "/srv/mounts/s-1/files/sesrsc_1",
      "/mnt/session/uploads/file_1",
    ]);
    const rw = args.indexOf("/srv/mounts/s-1/memory/memstore_1");
    expect(args.slice(rw - 1, rw + 2)).toEqual([
      "--bind",
      "/srv/mounts/s-1/memory/memstore_1",
      "/mnt/memory/prefs",
    ]);
    expect(rw).toBeLessThan(args.indexOf("--remount-ro"));
  });
});
