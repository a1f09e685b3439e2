import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxUnavailableError } from "./ports.js";
import { BLOCKED_SYSCALLS } from "./seccompFilter.js";

/** podman's default profile (containers-common): an allow-list, refusing what it does not name. */
const DEFAULT_PROFILE = "/usr/share/containers/seccomp.json";

interface SeccompRule {
  names?: string[];
  action: string;
  [key: string]: unknown;
}

/**
 * The container tier's seccomp profile: podman's default one, with every syscall the bwrap tier's
 * filter refuses (seccompFilter.ts: io_uring, ptrace, keyring, bpf, mount and namespace calls…)
 * taken out of its allowed rules and refused with EPERM, so a container is held to at least what
 * a bwrap sandbox is (podman's default alone lets PTRACE_TRACEME through). Written once into a
 * private directory; `podman run --security-opt seccomp=<path>` reads it.
 */
export async function writeContainerSeccompProfile(
  profilePath: string = DEFAULT_PROFILE,
): Promise<{ dir: string; path: string }> {
  let profile: { syscalls?: SeccompRule[]; [key: string]: unknown };
  try {
    profile = JSON.parse(await readFile(profilePath, "utf8")) as typeof profile;
  } catch (error) {
    throw new SandboxUnavailableError(
      "container",
      `podman's default seccomp profile (${profilePath}) could not be read: ${(error as Error).message}; install containers-common`,
    );
  }
  const blocked = new Set<string>(BLOCKED_SYSCALLS);
  const syscalls: SeccompRule[] = (profile.syscalls ?? [])
    .map((rule) => ({ ...rule, names: (rule.names ?? []).filter((name) => !blocked.has(name)) }))
    .filter((rule) => rule.names.length > 0);
  syscalls.push({ names: [...BLOCKED_SYSCALLS], action: "SCMP_ACT_ERRNO", errnoRet: 1 });
  const dir = await mkdtemp(join(tmpdir(), "awaken-container-"));
  const path = join(dir, "seccomp.json");
  await writeFile(path, JSON.stringify({ ...profile, syscalls }), { mode: 0o644 });
  return { dir, path };
}
