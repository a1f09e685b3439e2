import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostUidPool } from "../../src/sandbox/sandboxUsers.js";

// A range no other test uses, and a private lease directory.
const RANGE = { first: 241_000, last: 241_009 };
let leases: string;
const pools: HostUidPool[] = [];
/** A pool closed after the test: its uid reserved ahead would otherwise recreate the lease dir. */
function pool(): HostUidPool {
  const made = new HostUidPool(RANGE, leases);
  pools.push(made);
  return made;
}
beforeEach(() => {
  leases = mkdtempSync(join(tmpdir(), "awaken-uid-leases-"));
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  rmSync(leases, { recursive: true, force: true });
});

describe("host uids for sandboxes", () => {
  it("two pools drawing from one range on one host never hand out the same uid", async () => {
    // Two pools stand for two processes (a server and a worker, two test workers).
    const a = pool();
    const b = pool();
    const got = await Promise.all([a.allocate(), b.allocate(), a.allocate(), b.allocate()]);
    expect(new Set(got).size).toBe(got.length);
    expect(readdirSync(leases).map(Number).sort()).toEqual(expect.arrayContaining(got.sort()));
  });

  it("a released uid's lease is removed; a lease left by a dead process is taken over", async () => {
    const one = pool();
    const uid = await one.allocate();
    one.release(uid);
    expect(readdirSync(leases)).not.toContain(String(uid));

    // Every uid of the range leased by a process that has exited.
    const dead = spawnSync(process.execPath, [
      "-e",
      "process.stdout.write(String(process.pid))",
    ]).stdout.toString();
    for (let u = RANGE.first; u <= RANGE.last; u += 1) writeFileSync(join(leases, String(u)), dead);
    const fresh = pool();
    const taken = await fresh.allocate();
    expect(taken).toBeGreaterThanOrEqual(RANGE.first);
  });

  it("a closed pool leaves no lease behind, not even the uid it reserved ahead", async () => {
    const done = pool();
    const uid = await done.allocate();
    done.release(uid);
    await done.close();
    // Give a reservation that outlived close() the time to land.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readdirSync(leases)).toEqual([]);
  });

  it("a lease held by a live process is respected", async () => {
    for (let u = RANGE.first; u <= RANGE.last; u += 1) writeFileSync(join(leases, String(u)), "1");
    await expect(pool().allocate()).rejects.toThrow(/no free host uid/);
  });
});
