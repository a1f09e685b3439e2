/**
 * What a build worker names after itself, and how a later worker tells a killed one's leftovers
 * from a live one's: same host, same pid and the same process start, or it is gone.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  currentInstance,
  hostTag,
  instanceAlive,
  instanceName,
  instanceOf,
} from "../../src/worker/build/builderInstance.js";

describe("build worker instance names", () => {
  it("round-trips through container, image and directory names", () => {
    const me = currentInstance();
    const name = instanceName(me);
    expect(name).toMatch(/^awaken-build-[0-9a-f]{8}-\d+-\d+$/);
    for (const made of [
      `${name}-working-container`,
      `${name}-working-container-2`,
      `${name}:from-imgbuild_${"0".repeat(32)}-3`,
      `${name}-AbC123`,
    ])
      expect(instanceOf(made), made).toEqual(me);
  });

  it("does not claim other names: other containers, the old context dirs, look-alikes", () => {
    for (const other of [
      "awaken-sandbox-test-31ff408a-working-container",
      "awaken-build-0rrMYF",
      "awaken-build-abc-1-2",
      "my-awaken-build-0123abcd-1-2-working-container",
      "awaken-build-0123abcd-1-2x",
      "awaken-build-0123abcd-1",
    ])
      expect(instanceOf(other), other).toBeNull();
  });

  it("is alive while its process runs, dead once it exited or its pid was reused", async () => {
    const me = currentInstance();
    expect(instanceAlive(me)).toBe(true);
    // Same pid, another start: a reused pid is not the worker that named it.
    expect(instanceAlive({ ...me, start: me.start + 1 })).toBe(false);
    const child = spawn(process.execPath, ["-e", "0"]);
    const pid = child.pid as number;
    await new Promise((resolve) => child.once("exit", resolve));
    expect(instanceAlive({ host: hostTag(), pid, start: me.start })).toBe(false);
    // Another host's names are never judged dead here.
    const otherHost = hostTag() === "00000000" ? "11111111" : "00000000";
    expect(instanceAlive({ host: otherHost, pid, start: me.start })).toBe(true);
  });
});
