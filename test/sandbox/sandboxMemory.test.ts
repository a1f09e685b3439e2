import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseByteSize, sandboxLimitsFromEnv } from "../../src/sandbox/limitsFromEnv.js";
import {
  type CgroupHost,
  createSandboxCgroup,
  planMemory,
  sweepStaleCgroups,
} from "../../src/sandbox/sandboxMemory.js";

/** A cgroup v2 tree made of plain files: what the planner reads and the files a sandbox gets. */
describe("planning a sandbox's memory limit", () => {
  let root: string;
  let host: CgroupHost;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "cgroup-fake-"));
    host = {
      v2Mount: join(root, "v2"),
      v1Mount: join(root, "v1"),
      selfCgroup: async () => "0::/worker.service\n",
      pid: 4242,
    };
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("uses a delegated cgroup v2 with the memory controller enabled for its children", async () => {
    const parent = join(host.v2Mount, "worker.service");
    await mkdir(parent, { recursive: true });
    await writeFile(join(parent, "cgroup.controllers"), "cpu io memory pids\n");
    await writeFile(join(parent, "cgroup.subtree_control"), "memory pids\n");
    const plan = await planMemory({}, host);
    expect(plan).toEqual({ enforcement: "cgroup-v2", parent });
    const cgroup = await createSandboxCgroup(plan, "sandbox-1", {
      memoryBytes: 64 * 2 ** 20,
      processes: 256,
    });
    const dir = join(parent, "sandbox-1");
    expect(await readFile(join(dir, "memory.max"), "utf8")).toBe(String(64 * 2 ** 20));
    expect(await readFile(join(dir, "memory.swap.max"), "utf8")).toBe("0");
    expect(await readFile(join(dir, "pids.max"), "utf8")).toBe("256");
    await cgroup.add(77);
    expect(await readFile(join(dir, "cgroup.procs"), "utf8")).toBe("77");
    expect(await cgroup.oomKills()).toBe(0);
    await writeFile(join(dir, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n");
    expect(await cgroup.oomKills()).toBe(2);
  });

  it("falls back to RLIMIT_DATA where no memory cgroup is writable, unless the operator demands one", async () => {
    expect(await planMemory({}, host)).toEqual({ enforcement: "rlimit" });
    expect(await planMemory({ required: "rlimit" }, host)).toEqual({ enforcement: "rlimit" });
    await expect(planMemory({ required: "cgroup" }, host)).rejects.toThrow(
      /no writable memory cgroup for sandboxes: .*AWAKEN_SANDBOX_CGROUP/,
    );
  });

  it("does not take a cgroup v2 whose controllers lack memory", async () => {
    const parent = join(host.v2Mount, "worker.service");
    await mkdir(parent, { recursive: true });
    await writeFile(join(parent, "cgroup.controllers"), "cpu io pids\n");
    await writeFile(join(parent, "cgroup.subtree_control"), "");
    expect((await planMemory({}, host)).enforcement).toBe("rlimit");
  });
});

describe("the operator's sandbox limits", () => {
  it("reads sizes with units", () => {
    expect(parseByteSize("2g")).toBe(2 * 2 ** 30);
    expect(parseByteSize("512M")).toBe(512 * 2 ** 20);
    expect(parseByteSize("1.5GiB")).toBe(1.5 * 2 ** 30);
    expect(parseByteSize("1073741824")).toBe(2 ** 30);
    for (const bad of ["", "g", "-1g", "2 gigs", "1e9", "0x10"]) expect(parseByteSize(bad), bad).toBeNull();
  });

  it("takes memory, quota, enforcement and cgroup from the environment and refuses what does not parse", () => {
    expect(sandboxLimitsFromEnv({})).toEqual({ limits: {}, memory: {} });
    expect(
      sandboxLimitsFromEnv({
        AWAKEN_SANDBOX_MEMORY: "4g",
        AWAKEN_SANDBOX_DISK_QUOTA: "10g",
        AWAKEN_SANDBOX_MEMORY_ENFORCEMENT: "cgroup",
        AWAKEN_SANDBOX_CGROUP: "/sys/fs/cgroup/awaken.slice",
      }),
    ).toEqual({
      limits: { memoryBytes: 4 * 2 ** 30, workspaceBytes: 10 * 2 ** 30 },
      memory: { enforcement: "cgroup", cgroupParent: "/sys/fs/cgroup/awaken.slice" },
    });
    expect(() => sandboxLimitsFromEnv({ AWAKEN_SANDBOX_MEMORY: "lots" })).toThrow(
      /AWAKEN_SANDBOX_MEMORY must be/,
    );
    expect(() => sandboxLimitsFromEnv({ AWAKEN_SANDBOX_DISK_QUOTA: "1k" })).toThrow(/at least 16m/);
    expect(() => sandboxLimitsFromEnv({ AWAKEN_SANDBOX_MEMORY_ENFORCEMENT: "off" })).toThrow(
      /auto, cgroup or rlimit/,
    );
  });
});

describe("cgroups a crashed worker left", () => {
  it("are removed, those of live processes kept", async () => {
    const parent = await mkdtemp(join(tmpdir(), "cgroup-stale-"));
    try {
      // A pid far above pid_max is never alive.
      for (const name of ["awaken-sandbox-999999999-a", `awaken-sandbox-${process.pid}-b`, "other"]) {
        await mkdir(join(parent, name));
      }
      await sweepStaleCgroups({ enforcement: "cgroup-v1", parent });
      expect((await readdir(parent)).sort()).toEqual([`awaken-sandbox-${process.pid}-b`, "other"]);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
