import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { containerCommand } from "../../src/sandbox/containerArgs.js";
import {
  containerStorageFrom,
  containerStorageLayout,
  openContainerStorage,
  podmanStorageArgs,
} from "../../src/sandbox/containerStorage.js";
import { ContainerTierProvider } from "../../src/sandbox/containerTier.js";
import { SandboxUnavailableError } from "../../src/sandbox/ports.js";
import { type PodmanStore, podmanStore } from "../support/podmanStore.js";
import {
  buildSandboxImage,
  podmanMissing,
  SANDBOX_IMAGE_MARKER,
  type SandboxImage,
} from "../support/sandboxImage.js";

/**
 * A worker host's own podman store (`--container-storage`, `AWAKEN_CONTAINER_STORAGE`): the
 * setting is checked and the directory prepared at start-up; the container tier then runs every
 * podman command (sessions, warm pool, leftover sweep, removal) against that store only.
 */

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "cs-"));
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe("the container storage setting", () => {
  it("refuses a relative path, /, control characters and a path too long for podman, naming where it came from", () => {
    expect(() => openContainerStorage("store", "--container-storage")).toThrow(
      /--container-storage must be an absolute path/,
    );
    expect(() => openContainerStorage("", "AWAKEN_CONTAINER_STORAGE")).toThrow(/AWAKEN_CONTAINER_STORAGE/);
    expect(() => openContainerStorage("/", "--container-storage")).toThrow(/not \//);
    expect(() => openContainerStorage("//", "--container-storage")).toThrow(/not \//);
    expect(() => openContainerStorage(`${scratch}/a\nb`, "--container-storage")).toThrow(
      /control characters/,
    );
    // podman's own bound on its run directory (<dir>/run): refused at start-up, not at a session.
    expect(() => openContainerStorage(`/${"x".repeat(46)}`, "--container-storage")).toThrow(
      /at most 46 bytes long/,
    );
  });

  it("creates a missing directory 0700 with the store's parts, and names them in podman's global options", () => {
    const dir = join(scratch, "new", "store");
    const storage = openContainerStorage(`${dir}/`, "--container-storage");
    expect(storage).toEqual(containerStorageLayout(dir));
    expect(mode(dir)).toBe(0o700);
    for (const part of [storage.root, storage.runRoot, storage.tmpDir]) expect(mode(part)).toBe(0o700);
    expect(podmanStorageArgs(storage)).toEqual([
      "--root",
      join(dir, "root"),
      "--runroot",
      join(dir, "run"),
      "--tmpdir",
      join(dir, "tmp"),
    ]);
    expect(podmanStorageArgs(undefined)).toEqual([]);
  });

  it("takes an empty directory (tightened to 0700) and refuses one holding anything else, leaving it untouched", () => {
    const empty = join(scratch, "empty");
    mkdirSync(empty, { mode: 0o755 });
    chmodSync(empty, 0o755);
    openContainerStorage(empty, "--container-storage");
    expect(mode(empty)).toBe(0o700);

    const busy = join(scratch, "busy");
    mkdirSync(join(busy, "run"), { recursive: true });
    writeFileSync(join(busy, "run", "keep"), "x");
    expect(() => openContainerStorage(busy, "--container-storage")).toThrow(
      /neither empty nor a container store/,
    );
    expect(statSync(join(busy, "run", "keep")).isFile()).toBe(true);

    const file = join(scratch, "file");
    writeFileSync(file, "x");
    expect(() => openContainerStorage(file, "--container-storage")).toThrow(/not a directory/);
  });

  it("refuses a directory another user owns", () => {
    if (process.getuid?.() !== 0) return;
    const theirs = join(scratch, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65_534, 65_534);
    expect(() => openContainerStorage(theirs, "--container-storage")).toThrow(/owned by this process's user/);
  });

  it("keeps images across restarts and empties the run state after a reboot only", () => {
    const dir = join(scratch, "reboots");
    const first = openContainerStorage(dir, "--container-storage", () => "boot-1");
    writeFileSync(join(first.root, "image"), "kept");
    writeFileSync(join(first.runRoot, "mounts"), "stale after a reboot");
    writeFileSync(join(first.tmpDir, "alive"), "stale after a reboot");
    // A restart in the same boot: everything stays.
    openContainerStorage(dir, "--container-storage", () => "boot-1");
    expect(statSync(join(first.runRoot, "mounts")).isFile()).toBe(true);
    expect(statSync(join(first.tmpDir, "alive")).isFile()).toBe(true);
    // Another boot: the run state goes (podman then refreshes), the images stay.
    openContainerStorage(dir, "--container-storage", () => "boot-2");
    expect(() => statSync(join(first.runRoot, "mounts"))).toThrow();
    expect(() => statSync(join(first.tmpDir, "alive"))).toThrow();
    expect(statSync(join(first.root, "image")).isFile()).toBe(true);
    expect(mode(first.runRoot)).toBe(0o700);
  });

  it("takes the flag over AWAKEN_CONTAINER_STORAGE, and neither means podman's default store", () => {
    const fromFlag = join(scratch, "flag");
    const fromEnv = join(scratch, "env");
    expect(containerStorageFrom(fromFlag, { AWAKEN_CONTAINER_STORAGE: fromEnv })?.dir).toBe(fromFlag);
    expect(containerStorageFrom(undefined, { AWAKEN_CONTAINER_STORAGE: fromEnv })?.dir).toBe(fromEnv);
    expect(containerStorageFrom(undefined, {})).toBeUndefined();
    expect(containerStorageFrom(undefined, { AWAKEN_CONTAINER_STORAGE: "" })).toBeUndefined();
    expect(() => containerStorageFrom(undefined, { AWAKEN_CONTAINER_STORAGE: "rel" })).toThrow(
      /AWAKEN_CONTAINER_STORAGE must be an absolute path/,
    );
  });

  it("puts the store's options before podman's subcommand", () => {
    const storage = containerStorageLayout("/srv/store");
    const { args } = containerCommand({
      podmanPath: "/usr/bin/podman",
      runcPath: "/usr/sbin/runc",
      storage,
      name: "awaken-1-x",
      image: "localhost/awaken-base:1",
      pull: "never",
      tlsVerify: true,
      owner: { uid: 200_123, gid: 200_123 },
      limits: DEFAULT_LIMITS,
      workspaceHostPath: "/data/workspaces/s-1",
      seccompProfile: "/tmp/seccomp.json",
      argv: ["perl", "-e", "1"],
    });
    expect(args.slice(0, 9)).toEqual([...podmanStorageArgs(storage), "--runtime", "/usr/sbin/runc", "run"]);
  });
});

describe("a container tier on a store of its own", () => {
  let store: PodmanStore;
  let image: SandboxImage;

  beforeAll(() => {
    const missing = podmanMissing();
    if (missing) throw new Error(`the container storage test needs podman: ${missing}`);
    store = podmanStore(join(scratch, "tier-store"));
    openContainerStorage(store.dir, "--container-storage");
    // The image is in that store only: the default store cannot serve it.
    image = buildSandboxImage({ storageArgs: store.args });
  }, 120_000);

  afterAll(() => {
    image?.remove();
    store?.remove();
  });

  const names = (args: string[]) =>
    spawnSync("podman", [...args, "ps", "--all", "--format", "{{.Names}}"], { encoding: "utf8" })
      .stdout.split("\n")
      .filter(Boolean);

  it("runs sessions and its warm pool there, sweeps a dead worker's leftovers there, and leaves it empty on close", async () => {
    expect(spawnSync("podman", ["image", "exists", image.reference]).status).not.toBe(0);
    // A dead worker's leftover in the store: the first session's start removes it.
    const dead = spawn("true");
    const deadPid = await new Promise<number>((resolve) =>
      dead.on("exit", () => resolve(dead.pid as number)),
    );
    const leftover = `awaken-${deadPid}-leftover`;
    store.podman([
      "--runtime",
      "/usr/sbin/runc",
      "create",
      "--name",
      leftover,
      "--label",
      `io.awaken.sandbox=${deadPid}`,
      image.reference,
      "true",
    ]);
    const provider = new ContainerTierProvider({
      workspaceRoot: join(scratch, "tier-workspaces"),
      allowedImages: [image.reference],
      uidRange: { first: 234_000, last: 234_999 },
      poolSize: 1,
      storage: openContainerStorage(store.dir, "--container-storage"),
    });
    try {
      await provider.warm(image.reference);
      expect(provider.pooled(image.reference)).toBe(1);
      const sandbox = await provider.realize({
        tier: "container",
        image: image.reference,
        sessionId: "s-store",
        networking: { type: "unrestricted" },
      });
      const release = await sandbox.exec({
        argv: ["cat", "/etc/os-release"],
        timeoutMs: 20_000,
        maxOutputBytes: 100_000,
        signal: new AbortController().signal,
      });
      expect(release.stdout).toContain(SANDBOX_IMAGE_MARKER);
      expect(names(store.args)).not.toContain(leftover);
      const ours = names(store.args).filter((name) => name.startsWith(`awaken-${process.pid}-`));
      // The session's container, and the pool's refill for the next one.
      await provider.warm(image.reference);
      expect(
        names(store.args).filter((name) => name.startsWith(`awaken-${process.pid}-`)).length,
      ).toBeGreaterThanOrEqual(2);
      // None of them is in podman's default store.
      const inDefault = names([]);
      for (const name of ours) expect(inDefault).not.toContain(name);
      await provider.destroy("s-store");
    } finally {
      await provider.close();
    }
    expect(names(store.args)).toEqual([]);
    expect(await readdir(join(scratch, "tier-workspaces", ".container-pool")).catch(() => [])).toEqual([]);
  }, 120_000);

  it("pulls a missing image before its container starts, and a failed pull says so", async () => {
    // Nothing listens on port 1: the pull fails at once, as its own step (not as a start timeout).
    const unreachable = `127.0.0.1:1/awaken/environments@sha256:${"0".repeat(64)}`;
    const provider = new ContainerTierProvider({
      workspaceRoot: join(scratch, "pull-workspaces"),
      allowedImages: [unreachable],
      uidRange: { first: 235_000, last: 235_999 },
      poolSize: 0,
      pull: "missing",
      tlsVerify: false,
      storage: openContainerStorage(store.dir, "--container-storage"),
    });
    try {
      const error = await provider
        .realize({
          tier: "container",
          image: unreachable,
          sessionId: "s-pull",
          networking: { type: "unrestricted" },
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toMatch(
        /could not pull the image 127\.0\.0\.1:1\/awaken\/environments@sha256:0+: /,
      );
      expect((error as Error).message).not.toContain(store.dir);
    } finally {
      await provider.close();
    }
  }, 120_000);
});
