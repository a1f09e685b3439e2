import { endianness } from "node:os";

/**
 * The seccomp program a bwrap sandbox runs under, as the raw `struct sock_filter[]` bytes bwrap's
 * `--seccomp FD` reads. It refuses (EPERM) the kernel interfaces a command never needs and that
 * are the usual way out of, or around, a sandbox: io_uring (bypasses seccomp on its own ring),
 * ptrace and cross-process memory access, the keyring, bpf, perf events, userfaultfd (race
 * widening), and mount/namespace manipulation. Everything else is allowed: the rest of the
 * isolation comes from namespaces, capabilities and limits, not from this list.
 */

export const BLOCKED_SYSCALLS = [
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "add_key",
  "request_key",
  "keyctl",
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "mount",
  "umount2",
  "pivot_root",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "setns",
  "unshare",
] as const;

type BlockedSyscall = (typeof BLOCKED_SYSCALLS)[number];

type SupportedArch = "x64" | "arm64";

interface ArchTable {
  /** AUDIT_ARCH_* from <linux/audit.h>: what `seccomp_data.arch` holds for native syscalls. */
  auditArch: number;
  /** x86_64 also accepts x32 syscalls (nr | 0x40000000) under the same audit arch. */
  refuseX32: boolean;
  syscalls: Record<BlockedSyscall, number>;
}

/** Numbers from <asm/unistd_64.h> (x86_64) and <asm-generic/unistd.h> (aarch64). */
const ARCHES: Record<SupportedArch, ArchTable> = {
  x64: {
    auditArch: 0xc000003e,
    refuseX32: true,
    syscalls: {
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      add_key: 248,
      request_key: 249,
      keyctl: 250,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      setns: 308,
      unshare: 272,
    },
  },
  arm64: {
    auditArch: 0xc00000b7,
    refuseX32: false,
    syscalls: {
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      add_key: 217,
      request_key: 218,
      keyctl: 219,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      setns: 268,
      unshare: 97,
    },
  },
};

// Classic BPF opcodes (<linux/filter.h>) and seccomp return values (<linux/seccomp.h>).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO_EPERM = 0x00050000 | 1;
const RET_ALLOW = 0x7fff0000;
/** Offsets in `struct seccomp_data`. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const X32_SYSCALL_BIT = 0x40000000;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** The filter for `arch` (Node's `process.arch` naming); other architectures are refused. */
export function seccompProgram(arch: string = process.arch): Buffer {
  if (!Object.hasOwn(ARCHES, arch) || endianness() !== "LE") {
    throw new Error(
      `the bwrap tier's seccomp filter is built for x86_64 and aarch64 (little-endian) only, not ${arch}`,
    );
  }
  const table = ARCHES[arch as SupportedArch];
  const numbers = BLOCKED_SYSCALLS.map((name) => table.syscalls[name]);
  const program: Instruction[] = [
    // A syscall of another ABI (i386 via int 0x80 on x86_64) has other numbers: kill, never guess.
    { code: LD_W_ABS, jt: 0, jf: 0, k: ARCH_OFFSET },
    { code: JEQ_K, jt: 1, jf: 0, k: table.auditArch },
    { code: RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    { code: LD_W_ABS, jt: 0, jf: 0, k: NR_OFFSET },
  ];
  if (table.refuseX32) {
    program.push(
      { code: JGE_K, jt: 0, jf: 1, k: X32_SYSCALL_BIT },
      { code: RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    );
  }
  // Each match jumps over the remaining checks and the ALLOW to the EPERM at the end.
  numbers.forEach((nr, index) => {
    program.push({ code: JEQ_K, jt: numbers.length - index, jf: 0, k: nr });
  });
  program.push(
    { code: RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    { code: RET_K, jt: 0, jf: 0, k: RET_ERRNO_EPERM },
  );
  return encode(program);
}

/** `struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }`, native (little) endian. */
function encode(program: Instruction[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((ins, index) => {
    const at = index * 8;
    bytes.writeUInt16LE(ins.code, at);
    bytes.writeUInt8(ins.jt, at + 2);
    bytes.writeUInt8(ins.jf, at + 3);
    bytes.writeUInt32LE(ins.k, at + 4);
  });
  return bytes;
}
