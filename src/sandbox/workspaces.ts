import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type SandboxProvider, type SandboxSpec, SandboxUnavailableError } from "./ports.js";

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Where a session's workspace lives under the worker's workspace root. The id comes from the
 * activation, but it is a path component: anything but a plain id is refused rather than joined.
 */
export function workspaceDirectory(root: string, sessionId: string): string {
  if (!SESSION_ID.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
  return join(root, sessionId);
}

/** What erasing sessions' workspaces on this host did. */
export interface HostWorkspaceErasure {
  removed: number;
  failed: number;
  /** Sessions with no workspace on this host. */
  absent: number;
}

/**
 * Deletes the sessions' workspaces under `root` through `provider`, which first stops a live
 * sandbox over one (as a session's deletion does); the next turn starts over an empty workspace.
 * A workspace still there afterwards (an error) is counted as failed and told to `warn`.
 */
export async function eraseHostWorkspaces(
  provider: Pick<SandboxProvider, "destroy">,
  root: string,
  sessionIds: string[],
  warn: (sessionId: string, error: unknown) => void,
): Promise<HostWorkspaceErasure> {
  const outcome: HostWorkspaceErasure = { removed: 0, failed: 0, absent: 0 };
  for (const sessionId of sessionIds) {
    const path = workspaceDirectory(root, sessionId);
    try {
      if (!(await exists(path))) {
        outcome.absent += 1;
        continue;
      }
      await provider.destroy(sessionId);
      if (await exists(path)) throw new Error("the workspace is still there after its deletion");
      outcome.removed += 1;
    } catch (error) {
      warn(sessionId, error);
      outcome.failed += 1;
    }
  }
  return outcome;
}

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );

/** Where the tenants' registers live under the workspace root (beside `.pool` and `.packages`). */
const TENANTS_DIR = ".tenants";
export const DEFAULT_WORKSPACES_PER_TENANT = 100;

/**
 * Bounds how many session workspaces one tenant (an Awaken workspace) holds on this host, so its
 * disk is at most this many times the per-workspace quota, however many sessions it opens. Each
 * tenant has a register, a directory of one file per session whose workspace it made here; a file
 * whose workspace is gone (the session was deleted or erased) is dropped when counted, unless
 * that session's realization is still under way in this process (see `realizing`). A new
 * workspace past the bound is refused with a tool error naming it; an existing one serves.
 * Admissions of one tenant are serialized in this process; workers sharing a root may each let
 * one more in.
 *
 * A register file also holds the latest erasure of the session's data subject this host knew of
 * when it last admitted the workspace (the coordinator's stamp, so no two clocks are compared): a
 * workspace from before a newer erasure (one a remote worker held while the erasure ran) is
 * deleted before the sandbox starts, since its files may hold the erased content.
 */
export class TenantWorkspaces {
  private readonly queues = new Map<string, Promise<unknown>>();
  /**
   * Sessions admitted here whose realization (which makes the workspace) still runs, outside the
   * tenant's queue, with how many realizations each has under way. Their register file has no
   * workspace behind it yet but is theirs: pruning it would undercount the bound and leave their
   * workspace unstamped, so deleted as if older than any erasure of their subject.
   */
  private readonly realizing = new Map<string, number>();

  constructor(
    private readonly root: string,
    readonly perTenant: number = DEFAULT_WORKSPACES_PER_TENANT,
  ) {}

  /**
   * Runs `realize` (which makes the workspace) once the session may have its workspace here, after
   * deleting (with `erase`) one that predates its subject's latest erasure; throws
   * SandboxUnavailableError past the bound. Admissions of a tenant are serialized, realizations not.
   */
  async admit<T>(
    spec: AdmittedSpec,
    erase: (sessionId: string) => Promise<void>,
    realize: () => Promise<T>,
  ): Promise<T> {
    const { tenant, sessionId } = spec;
    if (tenant === undefined) return realize();
    const previous = this.queues.get(tenant) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        await this.admitNow(spec, tenant, erase);
        // Still in the queue: the tenant's next admission already counts this one as realizing.
        this.realizing.set(sessionId, (this.realizing.get(sessionId) ?? 0) + 1);
      });
    this.queues.set(tenant, next);
    void next
      .catch(() => {})
      .finally(() => {
        if (this.queues.get(tenant) === next) this.queues.delete(tenant);
      });
    await next;
    try {
      return await realize();
    } finally {
      const left = (this.realizing.get(sessionId) ?? 1) - 1;
      if (left > 0) this.realizing.set(sessionId, left);
      else this.realizing.delete(sessionId);
    }
  }

  private async admitNow(
    spec: AdmittedSpec,
    tenant: string,
    erase: (sessionId: string) => Promise<void>,
  ): Promise<void> {
    // Hashed: a tenant id is the coordinator's, never trusted as a path component.
    const register = join(this.root, TENANTS_DIR, createHash("sha256").update(tenant).digest("hex"));
    const marker = join(register, spec.sessionId);
    const workspace = workspaceDirectory(this.root, spec.sessionId);
    const erasedAt = spec.erasedAt ?? 0;
    if (await exists(workspace)) {
      const known = await readStamp(marker);
      // Made before the register existed (or by another worker): counted from now on. Without a
      // stamp it may predate an erasure, so it goes when the subject was ever erased.
      if (known === null && erasedAt === 0) return this.register(register, marker, erasedAt);
      if (known !== null && known >= erasedAt) return;
      await erase(spec.sessionId);
    }
    let held = 0;
    for (const sessionId of await readdir(register).catch(() => [] as string[])) {
      if (sessionId === spec.sessionId || !SESSION_ID.test(sessionId)) continue;
      if (this.realizing.has(sessionId) || (await exists(workspaceDirectory(this.root, sessionId))))
        held += 1;
      else await rm(join(register, sessionId), { force: true });
    }
    if (held >= this.perTenant) {
      throw new SandboxUnavailableError(
        spec.tier,
        `this workspace already has ${held} sessions with a sandbox workspace on this worker, the most it ` +
          "may have: delete sessions that are done (their workspaces go with them) and try again",
      );
    }
    await this.register(register, marker, erasedAt);
  }

  private async register(register: string, marker: string, erasedAt: number): Promise<void> {
    await mkdir(register, { recursive: true, mode: 0o700 });
    await writeFile(marker, String(erasedAt), { mode: 0o600 });
  }
}

type AdmittedSpec = Pick<SandboxSpec, "tier" | "sessionId" | "tenant" | "erasedAt">;

/** The erasure stamp a register file holds; null when there is none (or not a number). */
async function readStamp(marker: string): Promise<number | null> {
  const text = await readFile(marker, "utf8").catch(() => null);
  if (text === null || !/^\d+$/.test(text)) return null;
  return Number(text);
}
