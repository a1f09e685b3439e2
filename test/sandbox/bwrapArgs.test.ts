import { describe, expect, it } from "vitest";
import { bwrapCommand, DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { seccompProgram } from "../../src/sandbox/seccompFilter.js";

const invocation = {
  bashPath: "/usr/bin/bash",
  prlimitPath: "/usr/bin/prlimit",
  bwrapPath: "/usr/bin/bwrap",
  perlPath: "/usr/bin/perl",
  limits: DEFAULT_LIMITS,
  systemEntries: [
    { path: "/bin", symlinkTo: "usr/bin" },
    { path: "/lib64", directory: true as const },
  ],
  workspaceHostPath: "/srv/workspaces/s-1",
  argv: ["--share-net", "echo", "hi"],
};

describe("bwrapCommand", () => {
  const { command, args } = bwrapCommand(invocation);
  const separator = args.lastIndexOf("--");
  const bwrapArgs = args.slice(args.indexOf("/usr/bin/bwrap") + 1, separator);
  /** Whether `flag` is immediately followed by `values`. */
  const hasOption = (flag: string, ...values: string[]) =>
    bwrapArgs.some((arg, i) => arg === flag && values.every((v, j) => bwrapArgs[i + 1 + j] === v));

  it("closes inherited descriptors, then wraps bwrap in prlimit with the address space at 16 GiB", () => {
    expect(command).toBe("/usr/bin/bash");
    // No startup file, and an empty environment from there on (exec -c).
    expect(args.slice(0, 5)).toEqual([
      "--norc",
      "--noprofile",
      "-p",
      "-c",
      expect.stringContaining('exec -c "$@"'),
    ]);
    expect(args.slice(6, args.indexOf("/usr/bin/bwrap"))).toEqual([
      "/usr/bin/prlimit",
      "--cpu=600",
      "--as=17179869184",
      "--nproc=256",
      "--fsize=1073741824",
      "--nofile=1024",
      "--",
    ]);
  });

  it("isolates: namespaces, no capabilities, no nested user namespaces, new session, dies with parent", () => {
    for (const flag of [
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--die-with-parent",
      "--new-session",
    ]) {
      expect(bwrapArgs).toContain(flag);
    }
    expect(hasOption("--cap-drop", "ALL")).toBe(true);
    expect(bwrapArgs).not.toContain("--share-net");
    expect(hasOption("--uid", "1000")).toBe(true);
  });

  it("binds the system read-only, a curated /etc, and only the workspace writable", () => {
    expect(hasOption("--ro-bind", "/usr", "/usr")).toBe(true);
    expect(hasOption("--symlink", "usr/bin", "/bin")).toBe(true);
    expect(hasOption("--ro-bind", "/lib64", "/lib64")).toBe(true);
    expect(hasOption("--ro-bind-try", "/etc/ssl", "/etc/ssl")).toBe(true);
    expect(hasOption("--ro-bind-data", "3", "/etc/passwd")).toBe(true);
    expect(hasOption("--ro-bind-data", "4", "/etc/group")).toBe(true);
    const sources = bwrapArgs.filter((_, i) => /^--(ro-)?bind(-try)?$/.test(bwrapArgs[i - 1] ?? ""));
    expect(sources).not.toContain("/etc");
    expect(sources).not.toContain("/");
    const writable = bwrapArgs.flatMap((arg, i) => (arg === "--bind" ? [bwrapArgs[i + 1]] : []));
    expect(writable).toEqual(["/srv/workspaces/s-1"]);
    expect(hasOption("--bind", "/srv/workspaces/s-1", "/workspace")).toBe(true);
    expect(hasOption("--size", String(64 * 2 ** 20), "--tmpfs", "/tmp")).toBe(true);
    // bwrap's /dev is an unbounded tmpfs: /dev/shm is bounded, and the rest made read-only.
    expect(hasOption("--size", String(64 * 2 ** 20), "--tmpfs", "/dev/shm")).toBe(true);
    expect(bwrapArgs.indexOf("/dev/shm")).toBeGreaterThan(bwrapArgs.indexOf("--dev"));
    expect(hasOption("--remount-ro", "/dev")).toBe(true);
    expect(hasOption("--mqueue", "/dev/mqueue")).toBe(true);
    // The root is made read-only after the last mount, so only the mounts stay writable.
    expect(bwrapArgs.indexOf("--remount-ro")).toBeGreaterThan(bwrapArgs.lastIndexOf("--bind"));
  });

  it("clears the environment, loads the seccomp filter, and passes the command after `--` untouched", () => {
    expect(bwrapArgs).toContain("--clearenv");
    expect(hasOption("--setenv", "HOME", "/workspace")).toBe(true);
    expect(hasOption("--seccomp", "5")).toBe(true);
    expect(args.slice(separator + 1)).toEqual(["--share-net", "echo", "hi"]);
  });

  it("a HOME of its own when asked (a long-lived process's), the workspace otherwise", () => {
    const own = bwrapCommand({ ...invocation, home: "/tmp" }).args;
    const at = own.indexOf("HOME");
    expect(own.slice(at - 1, at + 2)).toEqual(["--setenv", "HOME", "/tmp"]);
    expect(own.filter((arg) => arg === "HOME")).toHaveLength(1);
  });

  it("without an egress directory: no proxy socket and no proxy variables", () => {
    expect(bwrapArgs.join(" ")).not.toMatch(/awaken-egress|PROXY|proxy/);
  });

  it("with one: binds it read-only, points the proxy variables at the relay, never shares the network", () => {
    const withEgress = bwrapCommand({ ...invocation, egressDir: "/tmp/awaken-egress-x" }).args;
    const inner = withEgress.slice(withEgress.indexOf("/usr/bin/bwrap") + 1, withEgress.lastIndexOf("--"));
    const has = (...values: string[]) =>
      inner.some((_, i) => values.every((value, j) => inner[i + j] === value));
    expect(has("--ro-bind", "/tmp/awaken-egress-x", "/run/awaken-egress")).toBe(true);
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) {
      expect(has("--setenv", name, "http://127.0.0.1:3128")).toBe(true);
    }
    expect(inner.join(" ")).not.toMatch(/NO_PROXY|no_proxy/);
    expect(inner).toContain("--unshare-all");
    expect(inner).not.toContain("--share-net");
  });

  it("extra variables (credential placeholders, the egress CA bundle) are set after the environment is cleared", () => {
    const extraEnv = { API_TOKEN: "awaken-secret-00", SSL_CERT_FILE: "/run/awaken-egress/ca-bundle.pem" };
    const withEnv = bwrapCommand({ ...invocation, egressDir: "/tmp/awaken-egress-x", extraEnv }).args;
    const inner = withEnv.slice(withEnv.indexOf("/usr/bin/bwrap") + 1, withEnv.lastIndexOf("--"));
    const at = (...values: string[]) =>
      inner.findIndex((_, i) => values.every((value, j) => inner[i + j] === value));
    expect(at("--setenv", "API_TOKEN", "awaken-secret-00")).toBeGreaterThan(at("--clearenv"));
    expect(at("--setenv", "SSL_CERT_FILE", "/run/awaken-egress/ca-bundle.pem")).toBeGreaterThan(
      at("--clearenv"),
    );
  });
});

const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 };
const KILL = 0x80000000;
const EPERM = 0x00050001;
const ALLOW = 0x7fff0000;

/** Runs the classic-BPF subset the filter uses against one `seccomp_data`. */
function verdict(program: Buffer, arch: number, nr: number): number {
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc += 1) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = k === 0 ? nr : k === 4 ? arch : Number.NaN;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error("fell off the end of the program");
}

describe("seccompProgram", () => {
  it("refuses the listed syscalls on x86_64, allows ordinary ones, kills other ABIs", () => {
    const program = seccompProgram("x64");
    expect(program.length % 8).toBe(0);
    const arch = AUDIT_ARCH.x64;
    // ptrace, keyctl, bpf, perf_event_open, userfaultfd, mount, setns, unshare, io_uring_setup/enter/register
    for (const nr of [101, 250, 321, 298, 323, 165, 308, 272, 425, 426, 427]) {
      expect(verdict(program, arch, nr), `syscall ${nr}`).toBe(EPERM);
    }
    // read, write, openat, execve, clone, clone3
    for (const nr of [0, 1, 257, 59, 56, 435])
      expect(verdict(program, arch, nr), `syscall ${nr}`).toBe(ALLOW);
    expect(verdict(program, 0x40000003, 101)).toBe(KILL); // i386
    expect(verdict(program, arch, 0x40000000 + 101)).toBe(KILL); // x32
  });

  it("uses the aarch64 numbers on arm64", () => {
    const program = seccompProgram("arm64");
    const arch = AUDIT_ARCH.arm64;
    for (const nr of [117, 219, 280, 241, 282, 40, 268, 97, 425]) {
      expect(verdict(program, arch, nr), `syscall ${nr}`).toBe(EPERM);
    }
    // read, write, openat, execve; 101 is nanosleep here, not ptrace
    for (const nr of [63, 64, 56, 221, 101]) expect(verdict(program, arch, nr), `syscall ${nr}`).toBe(ALLOW);
    expect(verdict(program, AUDIT_ARCH.x64, 117)).toBe(KILL);
  });

  it("refuses architectures it has no syscall table for", () => {
    expect(() => seccompProgram("riscv64")).toThrow(/x86_64 and aarch64/);
    expect(() => seccompProgram("toString")).toThrow(/x86_64 and aarch64/);
  });
});
