import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { containerCommand } from "../../src/sandbox/containerArgs.js";

const BASE = {
  podmanPath: "/usr/bin/podman",
  runcPath: "/usr/sbin/runc",
  name: "awaken-1-x",
  image: "localhost/awaken-base:1",
  pull: "never" as const,
  tlsVerify: true,
  owner: { uid: 200_123, gid: 200_123 },
  limits: DEFAULT_LIMITS,
  workspaceHostPath: "/data/workspaces/s-1",
  egressDir: "/tmp/awaken-egress-abc",
  seccompProfile: "/tmp/awaken-container-x/seccomp.json",
  argv: ["perl", "-e", "1"],
};

describe("the container tier's podman command line", () => {
  it("holds every isolation flag, runs on runc as the sandbox's uid, and puts the image last before its argv", () => {
    const { command, args } = containerCommand(BASE);
    expect(command).toBe("/usr/bin/podman");
    expect(args.slice(0, 3)).toEqual(["--runtime", "/usr/sbin/runc", "run"]);
    for (const flag of [
      "--network=none",
      "--cap-drop=all",
      "--security-opt=no-new-privileges",
      "--security-opt=seccomp=/tmp/awaken-container-x/seccomp.json",
      "--read-only",
      "--pull=never",
      "--log-driver=none",
      `--memory=${DEFAULT_LIMITS.memoryBytes}`,
      `--pids-limit=${DEFAULT_LIMITS.processes}`,
    ])
      expect(args, flag).toContain(flag);
    expect(args[args.indexOf("--user") + 1]).toBe("200123:200123");
    expect(args).toContain("type=bind,src=/data/workspaces/s-1,dst=/workspace,rw");
    expect(args).toContain("type=bind,src=/tmp/awaken-egress-abc,dst=/run/awaken-egress,ro");
    expect(args).not.toContain("--privileged");
    const at = args.indexOf("localhost/awaken-base:1");
    expect(args.slice(at + 1)).toEqual(["-e", "1"]);
    expect(args[at - 1]).toBe("perl");
    expect(args[at - 2]).toBe("--entrypoint");
  });

  it("refuses a host path --mount would mis-parse", () => {
    expect(() => containerCommand({ ...BASE, workspaceHostPath: "/data/a,dst=/etc" })).toThrow(
      /not a mountable path/,
    );
    expect(() => containerCommand({ ...BASE, egressDir: "relative" })).toThrow(/not a mountable path/);
  });
});
