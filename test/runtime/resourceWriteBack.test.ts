/**
 * The write-back's and the mount plan's own rules, on real directories: the diff of a store's
 * directory against its snapshot (creates, updates and deletes conditioned on what was read), files
 * that cannot be written back (links, binary, special files) refused without being followed, and
 * the plan and record of a run's resources (paths, never content or tokens).
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
  MemoryChange,
  MemorySnapshotEntry,
  ResourceClaim,
  RunResource,
  RunResources,
  RunSkill,
} from "../../src/resources/ports.js";
import {
  diffMemory,
  directoryEntries,
  MountedMemoryStore,
  sha256Hex,
} from "../../src/runtime/memoryWriteBack.js";
import {
  type KnownFile,
  readMountTree,
  signatureAt,
  syncMountTree,
  type WantedFile,
  writeMountFile,
  writeMountFiles,
} from "../../src/runtime/mountFiles.js";
import { planMounts, realizedBody, safeRelativePath } from "../../src/runtime/resourceRealization.js";
import { skillCatalogPrompt } from "../../src/runtime/skillCatalog.js";

let dir: string;
let outside: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "awaken-mount-"));
  outside = mkdtempSync(join(tmpdir(), "awaken-outside-"));
  writeFileSync(join(outside, "secret"), "host secret");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const entry = (memoryId: string, path: string, content: string): MemorySnapshotEntry => ({
  memoryId,
  path,
  content,
  contentSha256: sha256Hex(content),
});

describe("a mounted store's write-back reads only what changed", () => {
  const claim: ResourceClaim = { workspaceId: "w", sessionId: "s", runId: "r", owner: "o", epoch: 1 };
  /** The store's side, recording what it was sent; every change is written. */
  function recordingStore(sent: MemoryChange[][]): RunResources {
    const none = () => Promise.reject(new Error("not used"));
    return {
      resolve: none,
      readBlob: none,
      memorySnapshot: none,
      repositoryToken: none,
      writeMemory: async (_claim, _store, changes) => {
        sent.push(changes);
        return changes.map((c, i) =>
          c.kind === "delete"
            ? { path: c.path, outcome: "deleted" as const, memoryId: c.memoryId, versionId: `v${i}` }
            : {
                path: c.path,
                outcome: "written" as const,
                memoryId: c.kind === "update" ? c.memoryId : `mem_new${i}`,
                versionId: `v${i}`,
                contentSha256: sha256Hex(c.content),
              },
        );
      },
    };
  }

  it("a same-size rewrite right after a signature was taken is read back, not trusted to the signature", async () => {
    await writeMountFile(dir, "x.md", "aaaa", 0o600);
    const known = new Map([["x.md", (await signatureAt(dir, "x.md"))!]]);
    // Within the same tick of the ctime clock, a same-size write can leave (ino, size, ctime) as it was.
    writeFileSync(join(dir, "x.md"), "bbbb");
    const [file] = await readMountTree(dir, known);
    expect(file).toMatchObject({ path: "x.md", kind: "file" });
    expect(file?.kind === "file" && file.bytes.toString()).toBe("bbbb");
  });

  it("a file rewritten with its old mtime put back is still sent (the ctime says so); untouched files are not read", async () => {
    const snapshot = [entry("mem_1", "a.md", "one"), entry("mem_2", "b.md", "two")];
    for (const e of snapshot) await writeMountFile(dir, e.path, e.content, 0o600);
    // Past the window in which a signature is racy (the ctime clock's tick): now it is trusted alone.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const store = new MountedMemoryStore("memstore_1", "/mnt/memory/m", dir, snapshot);
    await store.noteWritten(["a.md", "b.md"]);
    const sent: MemoryChange[][] = [];
    const port = recordingStore(sent);

    expect(await store.writeBack(port, claim)).toEqual([]);
    const before = statSync(join(dir, "b.md"));
    writeFileSync(join(dir, "b.md"), "TWO");
    utimesSync(join(dir, "b.md"), before.atime, before.mtime);
    const tree = await readMountTree(dir, new Map([["a.md", "stale-signature"]]));
    expect(tree.find((f) => f.path === "a.md")?.kind).toBe("file");
    const known = new Map([["a.md", (await signatureAt(dir, "a.md"))!]]);
    expect((await readMountTree(dir, known)).find((f) => f.path === "a.md")?.kind).toBe("unchanged");

    await store.writeBack(port, claim);
    expect(sent).toEqual([
      [
        {
          kind: "update",
          memoryId: "mem_2",
          path: "b.md",
          content: "TWO",
          expectedContentSha256: sha256Hex("two"),
        },
      ],
    ]);
    // Nothing changed since: nothing is sent again, and a deleted file is still seen.
    expect(await store.writeBack(port, claim)).toEqual([]);
    rmSync(join(dir, "a.md"));
    await store.writeBack(port, claim);
    expect(sent.at(-1)).toEqual([
      { kind: "delete", memoryId: "mem_1", path: "a.md", expectedContentSha256: sha256Hex("one") },
    ]);
  });
});

describe("a mount is brought to a snapshot rewriting only what differs", () => {
  const wanted = (path: string, content: string): WantedFile => ({
    path,
    content,
    sha256: sha256Hex(content),
  });
  /** Every path under `root`, directories marked with a trailing `/`, links with `@`. */
  function listing(root: string, relative = ""): string[] {
    return readdirSync(join(root, relative), { withFileTypes: true }).flatMap((e) => {
      const path = relative === "" ? e.name : `${relative}/${e.name}`;
      if (e.isSymbolicLink()) return [`${path}@`];
      return e.isDirectory() ? [`${path}/`, ...listing(root, path)] : [path];
    });
  }

  /** Past the file system's clock tick, so a file written again has another change time. */
  const pause = () => new Promise((resolve) => setTimeout(resolve, 25));

  it("keeps untouched files, rewrites edited ones and removes a dead run's leftovers, following no link", async () => {
    const files = [wanted("a.md", "one"), wanted("notes/b.md", "two"), wanted("notes/c.md", "three")];
    const known: Map<string, KnownFile> = await syncMountTree(dir, files, new Map(), 0o600, 0o700);
    expect(listing(dir).sort()).toEqual(["a.md", "notes/", "notes/b.md", "notes/c.md"]);
    // The change time says whether a file was written again (inode numbers are reused at once).
    const inode = (path: string) => lstatSync(join(dir, path), { bigint: true }).ctimeNs;
    const before = { a: inode("a.md"), b: inode("notes/b.md") };

    await pause();
    // What a run that died before its write-back left: an edit, a new file, a new directory, links.
    writeFileSync(join(dir, "notes", "c.md"), "edited");
    writeFileSync(join(dir, "stray.md"), "left over");
    mkdirSync(join(dir, "junk", "deep"), { recursive: true });
    writeFileSync(join(dir, "junk", "deep", "x"), "x");
    symlinkSync(join(outside, "secret"), join(dir, "link.md"));
    symlinkSync(outside, join(dir, "linkdir"));
    const again = await syncMountTree(
      dir,
      [...files, wanted("link.md", "store"), wanted("linkdir/d.md", "dee")],
      known,
      0o600,
      0o700,
    );
    expect(listing(dir).sort()).toEqual([
      "a.md",
      "link.md",
      "linkdir/",
      "linkdir/d.md",
      "notes/",
      "notes/b.md",
      "notes/c.md",
    ]);
    // Untouched files are the very ones written before; the edited one holds the store's again.
    expect({ a: inode("a.md"), b: inode("notes/b.md") }).toEqual(before);
    expect(await readFile(join(dir, "notes", "c.md"), "utf8")).toBe("three");
    expect(await readFile(join(dir, "link.md"), "utf8")).toBe("store");
    expect(readdirSync(outside)).toEqual(["secret"]);
    expect(await readFile(join(outside, "secret"), "utf8")).toBe("host secret");
    expect([...again.keys()].sort()).toEqual(["a.md", "link.md", "linkdir/d.md", "notes/b.md", "notes/c.md"]);

    // A file whose content the store changed is rewritten even though untouched; one whose mode
    // the sandbox changed (its ctime too) is rewritten with the mount's mode.
    const third = [wanted("a.md", "ONE"), wanted("notes/b.md", "two")];
    chmodSync(join(dir, "notes", "b.md"), 0o666);
    const chmodded = inode("notes/b.md");
    await pause();
    await syncMountTree(dir, third, again, 0o600, 0o700);
    expect(listing(dir).sort()).toEqual(["a.md", "notes/", "notes/b.md"]);
    expect(await readFile(join(dir, "a.md"), "utf8")).toBe("ONE");
    expect(statSync(join(dir, "notes", "b.md")).mode & 0o777).toBe(0o600);
    expect(inode("notes/b.md")).not.toBe(chmodded);
  });

  it("without what was known (another worker), every file is rewritten", async () => {
    const files = [wanted("a.md", "one")];
    await syncMountTree(dir, files, new Map(), 0o600, 0o700);
    const first = lstatSync(join(dir, "a.md"), { bigint: true }).ctimeNs;
    writeFileSync(join(dir, "stray"), "");
    await pause();
    await syncMountTree(dir, files, new Map(), 0o600, 0o700);
    expect(lstatSync(join(dir, "a.md"), { bigint: true }).ctimeNs).not.toBe(first);
    expect(existsSync(join(dir, "stray"))).toBe(false);
  });

  it("yields to the event loop between batches; a directory swapped for a link meanwhile is not written through", async () => {
    const files = Array.from({ length: 300 }, (_, i) => ({
      path: `a${String(i).padStart(3, "0")}.md`,
      content: "x",
    }));
    files.push({ path: "sub/z.md", content: "z" });
    let turns = 0;
    let planted = false;
    const tick = (): void => {
      turns += 1;
      if (!planted && existsSync(join(dir, "a000.md"))) {
        symlinkSync(outside, join(dir, "sub"));
        planted = true;
      }
      if (turns < 10_000) setImmediate(tick);
    };
    setImmediate(tick);
    await expect(writeMountFiles(dir, files, 0o600)).rejects.toThrow(/sub is not a directory/);
    turns = 10_000;
    expect(planted).toBe(true);
    expect(existsSync(join(dir, "a299.md"))).toBe(true);
    expect(readdirSync(outside)).toEqual(["secret"]);
  });
});

describe("a write-back that fails is sent again", () => {
  it("a change whose write-back threw is read and sent at the next one", async () => {
    const claim: ResourceClaim = { workspaceId: "w", sessionId: "s", runId: "r", owner: "o", epoch: 1 };
    const snapshot = [entry("mem_1", "a.md", "one")];
    const known = await syncMountTree(
      dir,
      snapshot.map((e) => ({ path: e.path, content: e.content, sha256: e.contentSha256 })),
      new Map(),
      0o600,
      0o700,
    );
    const store = new MountedMemoryStore("memstore_1", "/mnt/memory/m", dir, snapshot, known);
    const sent: MemoryChange[][] = [];
    let failing = true;
    const none = () => Promise.reject(new Error("not used"));
    const port: RunResources = {
      resolve: none,
      readBlob: none,
      memorySnapshot: none,
      repositoryToken: none,
      writeMemory: async (_claim, _store, changes) => {
        if (failing) throw new Error("database unreachable");
        sent.push(changes);
        return [];
      },
    };
    writeFileSync(join(dir, "a.md"), "ONE");
    await expect(store.writeBack(port, claim)).rejects.toThrow(/unreachable/);
    failing = false;
    await store.writeBack(port, claim);
    expect(sent).toEqual([
      [
        {
          kind: "update",
          memoryId: "mem_1",
          path: "a.md",
          content: "ONE",
          expectedContentSha256: sha256Hex("one"),
        },
      ],
    ]);
  });
});

describe("memory diff", () => {
  it("creates new paths, updates changed content and deletes missing paths, each on what was read", () => {
    const snapshot = [
      entry("mem_1", "a.md", "one"),
      entry("mem_2", "b.md", "two"),
      entry("mem_3", "c.md", "3"),
    ];
    const { changes, refused } = diffMemory(snapshot, [
      { path: "a.md", content: "one" },
      { path: "b.md", content: "TWO" },
      { path: "notes/d.md", content: "new" },
    ]);
    expect(refused).toEqual([]);
    expect(changes).toEqual([
      {
        kind: "update",
        memoryId: "mem_2",
        path: "b.md",
        content: "TWO",
        expectedContentSha256: sha256Hex("two"),
      },
      { kind: "create", path: "notes/d.md", content: "new" },
      { kind: "delete", memoryId: "mem_3", path: "c.md", expectedContentSha256: sha256Hex("3") },
    ]);
  });

  it("an unchanged directory sends nothing", () => {
    const snapshot = [entry("mem_1", "a.md", "one")];
    expect(diffMemory(snapshot, [{ path: "a.md", content: "one" }])).toEqual({ changes: [], refused: [] });
  });

  it("reads a directory without following links; links, binary and special files are refused", async () => {
    mkdirSync(join(dir, "notes"));
    writeFileSync(join(dir, "notes", "a.md"), "text");
    writeFileSync(join(dir, "bin.dat"), Buffer.from([0xff, 0xfe, 0x00]));
    symlinkSync(join(outside, "secret"), join(dir, "link.md"));
    symlinkSync(outside, join(dir, "linkdir"));
    const entries = directoryEntries(await readMountTree(dir));
    expect(entries).toEqual([
      { path: "bin.dat", problem: "not UTF-8 text" },
      { path: "link.md", problem: expect.stringMatching(/not a regular file/) },
      { path: "linkdir", problem: expect.stringMatching(/not a regular file/) },
      { path: "notes/a.md", content: "text" },
    ]);
    expect(JSON.stringify(entries)).not.toContain("host secret");
    // A link planted where a memory is refreshed is replaced, never written through.
    await writeMountFile(dir, "link.md", "store content");
    expect(await readFile(join(outside, "secret"), "utf8")).toBe("host secret");
    expect(await readFile(join(dir, "link.md"), "utf8")).toBe("store content");
    // A parent that is a link is not a directory: refused.
    await expect(writeMountFile(dir, "linkdir/x.md", "x")).rejects.toThrow(/not a directory/);
  });
});

describe("mount plan and record", () => {
  const resources: RunResource[] = [
    {
      type: "file",
      id: "sesrsc_1",
      fileId: "file_1",
      mountPath: "/mnt/session/uploads/file_1",
      filename: "a.csv",
      mimeType: "text/csv",
      sizeBytes: 3,
      digest: `sha256:${"a".repeat(64)}`,
    },
    {
      type: "memory_store",
      memoryStoreId: "memstore_1",
      mountPath: "/mnt/memory/prefs",
      access: "read_only",
      name: "prefs",
      description: "d",
      instructions: null,
    },
    {
      type: "github_repository",
      id: "sesrsc_2",
      url: "https://github.com/o/r",
      mountPath: "/workspace/r",
      checkout: null,
      hasToken: true,
    },
  ];
  const skills: RunSkill[] = [
    { skillId: "skill_1", version: "1700000000000", name: "pdf", description: "PDFs.", files: [] },
    { skillId: "skill_2", version: "1", name: "../evil", description: "x\n# injected", files: [] },
  ];

  it("places files and stores at their mount paths, skills under /mnt/skills, repositories nowhere", () => {
    expect(planMounts(resources, skills).map((p) => p.mount)).toEqual([
      { sandboxPath: "/mnt/session/uploads/file_1", hostPath: "files/sesrsc_1", readOnly: true },
      { sandboxPath: "/mnt/memory/prefs", hostPath: "memory/memstore_1", readOnly: true },
      { sandboxPath: "/mnt/skills/pdf", hostPath: "skills/skill_1@1700000000000", readOnly: true },
      // A name that is not a plain segment is replaced by the skill's id.
      { sandboxPath: "/mnt/skills/skill_2", hostPath: "skills/skill_2@1", readOnly: true },
    ]);
  });

  it("refuses ids that are not plain (they become host path segments)", () => {
    expect(() => planMounts([{ ...resources[0]!, id: "../x" } as RunResource], [])).toThrow(/plain id/);
  });

  it("records ids, paths, digests and versions, never a token or a URL's credentials", () => {
    const body = realizedBody("mounted", resources, skills);
    expect(body).toMatchObject({
      mode: "mounted",
      resources: [
        { type: "file", digest: `sha256:${"a".repeat(64)}` },
        { type: "memory_store", access: "read_only" },
        { type: "github_repository", has_token: true },
      ],
      skills: [
        { skill_id: "skill_1", version: "1700000000000", path: "/mnt/skills/pdf" },
        { skill_id: "skill_2" },
      ],
    });
    expect(JSON.stringify(body)).not.toContain("github.com");
  });

  it("lists skills in the prompt on one line each, the author's text flattened", () => {
    const prompt = skillCatalogPrompt(skills, "mounted") ?? "";
    expect(prompt).toContain("- pdf: PDFs. (/mnt/skills/pdf/SKILL.md)");
    expect(prompt).not.toContain("\n# injected");
    expect(skillCatalogPrompt([], "tools")).toBeNull();
  });

  it("accepts only relative paths that stay inside", () => {
    expect(safeRelativePath("docs/a.md")).toBe("docs/a.md");
    for (const bad of ["", "/etc/x", "../x", "a/../../x", "a//b", "a/./b", "a\0b"])
      expect(safeRelativePath(bad)).toBeNull();
  });
});
