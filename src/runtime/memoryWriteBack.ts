/**
 * Memory write-back: what the agent changed in a read-write memory store's mounted directory since
 * the store's snapshot, sent to the store at the run's commit points under the run's claim. The
 * store checks the claim and each change's precondition in one transaction: a change to a memory
 * someone else changed meanwhile is a `conflict`, never an overwrite. After each write-back the
 * directory holds, for every path that was sent, what the store now holds, so the agent always
 * works on current content and a refused or conflicting change is not sent again and again.
 */
import { createHash } from "node:crypto";
import { BoundedCache } from "../kernel/boundedCache.js";
import type {
  MemoryChange,
  MemoryChangeOutcome,
  MemorySnapshotEntry,
  ResourceClaim,
  RunResources,
} from "../resources/ports.js";
import {
  type FileSignature,
  type KnownFile,
  type MountFile,
  readMountTree,
  removeMountFile,
  signatureAt,
  writeMountFile,
} from "./mountFiles.js";

export function sha256Hex(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

/** How many host directories this process remembers the files of (least recently used forgotten). */
const KNOWN_DIRECTORIES = 256;
const knownByDirectory = new BoundedCache<string, Map<string, KnownFile>>({ maxEntries: KNOWN_DIRECTORIES });

/**
 * What this process last wrote or read in a host directory, per path: the next run on the same
 * session rewrites only what differs from it (`syncMountTree`). Held in memory, never on disk or
 * in the sandbox's reach: another process (a restarted or different worker) knows nothing and
 * rewrites everything; one that knows stale entries is safe, as signatures no longer match.
 */
export function knownFilesOf(hostDir: string): Map<string, KnownFile> {
  const known = knownByDirectory.get(hostDir);
  if (known !== undefined) return known;
  const fresh = new Map<string, KnownFile>();
  knownByDirectory.set(hostDir, fresh);
  return fresh;
}

/** A file of the directory as the diff sees it: text, unchanged since known, or why it cannot be written back. */
export type DirectoryEntry =
  | { path: string; content: string }
  | { path: string; unchanged: true }
  | { path: string; problem: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function directoryEntries(files: readonly MountFile[]): DirectoryEntry[] {
  return files.map((file) => {
    if (file.kind === "unreadable") return { path: file.path, problem: file.reason };
    if (file.kind === "unchanged") return { path: file.path, unchanged: true };
    try {
      return { path: file.path, content: utf8.decode(file.bytes) };
    } catch {
      return { path: file.path, problem: "not UTF-8 text" };
    }
  });
}

/**
 * The changes that turn `snapshot` into the directory: new paths are created, changed content
 * updated and missing paths deleted, each update and delete conditioned on the content the
 * snapshot read. A file that cannot be written back is a local refusal, sent nowhere.
 */
export function diffMemory(
  snapshot: readonly MemorySnapshotEntry[],
  directory: readonly DirectoryEntry[],
): { changes: MemoryChange[]; refused: MemoryChangeOutcome[] } {
  const known = new Map(snapshot.map((entry) => [entry.path, entry]));
  const changes: MemoryChange[] = [];
  const refused: MemoryChangeOutcome[] = [];
  const present = new Set<string>();
  for (const file of directory) {
    present.add(file.path);
    if ("problem" in file) {
      refused.push({ path: file.path, outcome: "refused", reason: file.problem });
      continue;
    }
    if ("unchanged" in file) continue;
    const before = known.get(file.path);
    if (before === undefined) changes.push({ kind: "create", path: file.path, content: file.content });
    else if (sha256Hex(file.content) !== before.contentSha256)
      changes.push({
        kind: "update",
        memoryId: before.memoryId,
        path: file.path,
        content: file.content,
        expectedContentSha256: before.contentSha256,
      });
  }
  for (const entry of snapshot) {
    if (!present.has(entry.path))
      changes.push({
        kind: "delete",
        memoryId: entry.memoryId,
        path: entry.path,
        expectedContentSha256: entry.contentSha256,
      });
  }
  return { changes, refused };
}

/** What the agent is told of a write-back's outcomes that did not take (written ones are silent). */
export function writeBackNotes(mountPath: string, outcomes: readonly MemoryChangeOutcome[]): string[] {
  return outcomes.flatMap((o) => {
    if (o.outcome === "conflict")
      return [
        `${mountPath}/${o.path} was not saved: the memory changed since you read it (${o.reason}); the file now holds its current content.`,
      ];
    if (o.outcome === "refused")
      return [
        `${mountPath}/${o.path} was not saved: ${o.reason}; the file now holds what the memory store holds.`,
      ];
    return [];
  });
}

/**
 * One read-write store mounted as a directory: its snapshot (what the store held as the run last
 * knew it) and the write-back of the directory against it.
 */
export class MountedMemoryStore {
  private snapshot: MemorySnapshotEntry[];
  /** Each file's signature when its content last matched the snapshot's (written or read). */
  private readonly signatures = new Map<string, FileSignature>();

  constructor(
    readonly memoryStoreId: string,
    readonly mountPath: string,
    /** The directory on the host. */
    readonly hostDir: string,
    snapshot: MemorySnapshotEntry[],
    /** What this process knows the directory's files to hold (`knownFilesOf`), kept current. */
    private readonly known: Map<string, KnownFile> = new Map(),
  ) {
    this.snapshot = snapshot;
    for (const [path, file] of known) this.signatures.set(path, file.signature);
  }

  /** Notes the signatures of the files just written from the snapshot (unchanged until the sandbox writes). */
  async noteWritten(paths: readonly string[]): Promise<void> {
    for (const path of paths) await this.noteSignature(path);
  }

  /**
   * Sends the directory's changes, then brings every path that did not take back to the store's
   * content. Throws `ResourceClaimLostError` (nothing written) when the claim is not live.
   */
  async writeBack(resources: RunResources, claim: ResourceClaim): Promise<MemoryChangeOutcome[]> {
    const tree = await readMountTree(this.hostDir, this.signatures);
    const { changes, refused } = diffMemory(this.snapshot, directoryEntries(tree));
    // Noted only once sent: a write-back that throws leaves them to be read and sent again.
    const outcomes =
      changes.length === 0 ? [] : await resources.writeMemory(claim, this.memoryStoreId, changes);
    this.noteTree(tree);
    if (changes.length === 0 && refused.length === 0) return [];
    const all = [...outcomes, ...refused];
    const untaken = all.filter((o) => o.outcome === "conflict" || o.outcome === "refused");
    const byPath = new Map(changes.map((change) => [change.path, change]));
    for (const outcome of outcomes) {
      const change = byPath.get(outcome.path);
      if (outcome.outcome === "written" && change && change.kind !== "delete") {
        this.snapshot = [
          ...this.snapshot.filter((e) => e.path !== outcome.path),
          {
            memoryId: outcome.memoryId,
            path: outcome.path,
            content: change.content,
            contentSha256: outcome.contentSha256,
          },
        ];
      } else if (outcome.outcome === "deleted") {
        this.snapshot = this.snapshot.filter((e) => e.path !== outcome.path);
      }
    }
    if (untaken.length > 0)
      await this.refresh(
        resources,
        claim,
        untaken.map((o) => o.path),
      );
    return all;
  }

  /** Reads the store again and rewrites `paths` in the directory as it now holds them. */
  private async refresh(resources: RunResources, claim: ResourceClaim, paths: string[]): Promise<void> {
    const current = await resources.memorySnapshot(claim, this.memoryStoreId);
    const byPath = new Map(current.map((entry) => [entry.path, entry]));
    for (const path of paths) {
      const entry = byPath.get(path);
      const previous = this.snapshot.filter((e) => e.path !== path);
      this.snapshot = entry ? [...previous, entry] : previous;
      try {
        if (entry) {
          this.forget(path);
          await writeMountFile(this.hostDir, path, entry.content, 0o600);
          await this.noteSignature(path, entry.contentSha256);
        } else {
          this.forget(path);
          await removeMountFile(this.hostDir, path);
        }
      } catch {
        // A path the directory cannot hold as a file (a directory there): left as the agent made it.
      }
    }
  }

  /** Notes what the files just read hold; a path gone or unreadable is known no more. */
  private noteTree(tree: readonly MountFile[]): void {
    const present = new Set(tree.map((file) => file.path));
    for (const path of this.signatures.keys()) if (!present.has(path)) this.forget(path);
    for (const path of this.known.keys()) if (!present.has(path)) this.known.delete(path);
    for (const file of tree) {
      if (file.kind === "file") {
        this.signatures.set(file.path, file.signature);
        this.known.set(file.path, {
          signature: file.signature,
          sha256: createHash("sha256").update(file.bytes).digest("hex"),
        });
      } else if (file.kind === "unreadable") this.forget(file.path);
    }
  }

  private forget(path: string): void {
    this.signatures.delete(path);
    this.known.delete(path);
  }

  private async noteSignature(path: string, sha256?: string): Promise<void> {
    const signature = await signatureAt(this.hostDir, path);
    if (signature === null) return this.forget(path);
    this.signatures.set(path, signature);
    if (sha256 === undefined) this.known.delete(path);
    else this.known.set(path, { signature, sha256 });
  }
}
