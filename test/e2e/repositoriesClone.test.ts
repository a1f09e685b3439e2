/**
 * The worker's repository clone (sandbox/gitClone.ts) against real repositories served by git's
 * own smart HTTP backend on the loopback: the branch or commit asked for is checked out, the files
 * become the sandbox's uid's, and the token is sent to the server yet found nowhere in the tree
 * (`.git` included), the server's log or an error. Hostile input never reaches git: refused URLs,
 * option-like branches, a path through a symlink, an address the outbound policy refuses (checked
 * on the address git is pinned to, so a name that resolves elsewhere later is never asked again).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
} from "node:fs";
import { chown } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OutboundPolicy } from "../../src/kernel/outboundPolicy.js";
import { RepositoryCloneError, RepositoryCloner } from "../../src/sandbox/gitClone.js";
import { type GitHttpServer, startGitHttpServer } from "../support/gitHttpServer.js";

let server: GitHttpServer;
let root: string;
let workspace: string;
const TOKEN = `ghp_test_${randomBytes(12).toString("hex")}`;
let shas: Record<string, string>;

beforeEach(async () => {
  server = await startGitHttpServer();
  shas = server.createRepository("private-repo", {
    token: TOKEN,
    commits: [
      { message: "first", files: { "README.md": "# private\n" } },
      { message: "second", files: { "src/app.txt": "main branch\n" } },
    ],
    branches: { feature: { message: "feature work", files: { "FEATURE.md": "on feature\n" } } },
  });
  root = mkdtempSync(join(tmpdir(), "awaken-clone-ws-"));
  workspace = join(root, "sesn_clone");
  mkdirSync(workspace, { mode: 0o700 });
});
afterEach(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

const loopbackAllowed = () => OutboundPolicy.allowing("127.0.0.1");
const tokenOnce = () => {
  let opened = 0;
  const open = async () => {
    opened += 1;
    return Buffer.from(TOKEN);
  };
  return { open, opened: () => opened };
};
const git = (cwd: string, args: string[]) =>
  execFileSync("git", args, {
    cwd,
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" },
    encoding: "utf8",
  }).trim();

/** Every file under `dir` (symlinks not followed) that holds `needle`, by path. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesHolding(path, needle));
    else if (entry.isFile() && readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

describe("RepositoryCloner", () => {
  it("clones a private branch with the token, which lands nowhere in the tree, the log or git's config", async () => {
    const cloner = new RepositoryCloner({ policy: loopbackAllowed() });
    const token = tokenOnce();
    const outcome = await cloner.clone({
      url: `${server.url}/private-repo.git`,
      checkout: { type: "branch", name: "feature" },
      workspace,
      relativePath: "private-repo",
      token: token.open,
      signal: new AbortController().signal,
    });
    expect(outcome).toEqual({ kind: "cloned", head: shas["feature work"] });
    const repo = join(workspace, "private-repo");
    expect(readFileSync(join(repo, "FEATURE.md"), "utf8")).toBe("on feature\n");
    expect(readFileSync(join(repo, "src/app.txt"), "utf8")).toBe("main branch\n");
    expect(git(repo, ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("feature");
    expect(git(repo, ["log", "--format=%s"]).split("\n")).toEqual(["feature work", "second", "first"]);
    expect(token.opened()).toBe(1);

    // The server was sent the token (Basic, as forges take it)…
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");
    expect(server.authorizations).toContain(`Basic ${basic}`);
    // …and it is nowhere in the clone (`.git` with its config, reflogs, packed-refs, FETCH_HEAD),
    // in either form, nor in the server's log; the remote URL is the plain one.
    for (const needle of [TOKEN, basic]) {
      expect(filesHolding(repo, needle)).toEqual([]);
      expect(filesHolding(root, needle)).toEqual([]);
      expect(server.log.join("\n")).not.toContain(needle);
    }
    expect(git(repo, ["config", "--get", "remote.origin.url"])).toBe(`${server.url}/private-repo.git`);
    expect(readFileSync(join(repo, ".git/config"), "utf8")).not.toMatch(/extraheader|authorization/i);
    // No staging directory is left behind, beside the workspace.
    expect(readdirSync(join(root, ".clones"))).toEqual([]);
  });

  it("checks out a commit detached, and the default branch when none is asked for", async () => {
    const cloner = new RepositoryCloner({ policy: loopbackAllowed() });
    const signal = new AbortController().signal;
    const base = { url: `${server.url}/private-repo.git`, workspace, token: tokenOnce().open, signal };
    const atFirst = await cloner.clone({
      ...base,
      checkout: { type: "commit", sha: shas.first as string },
      relativePath: "at-first",
    });
    expect(atFirst).toEqual({ kind: "cloned", head: shas.first });
    expect(() => lstatSync(join(workspace, "at-first/src"))).toThrow();
    expect(git(join(workspace, "at-first"), ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("HEAD");

    const main = await cloner.clone({ ...base, checkout: null, relativePath: "nested/dir/main" });
    expect(main).toEqual({ kind: "cloned", head: shas.second });
    expect(readFileSync(join(workspace, "nested/dir/main/src/app.txt"), "utf8")).toBe("main branch\n");
  });

  it("gives the clone to the workspace's owner, entry by entry", async () => {
    if (process.getuid?.() !== 0) return; // only root can give files away
    await chown(workspace, 200_321, 200_321);
    const cloner = new RepositoryCloner({ policy: loopbackAllowed() });
    await cloner.clone({
      url: `${server.url}/private-repo.git`,
      checkout: null,
      workspace,
      relativePath: "owned/repo",
      token: tokenOnce().open,
      signal: new AbortController().signal,
    });
    for (const path of [
      "owned",
      "owned/repo",
      "owned/repo/README.md",
      "owned/repo/.git",
      "owned/repo/.git/HEAD",
    ]) {
      expect(lstatSync(join(workspace, path)).uid, path).toBe(200_321);
    }
  });

  it("a wrong token is a clear authentication error that does not carry it", async () => {
    const cloner = new RepositoryCloner({ policy: loopbackAllowed() });
    const wrong = `wrong_${randomBytes(8).toString("hex")}`;
    const failed = cloner.clone({
      url: `${server.url}/private-repo.git`,
      checkout: null,
      workspace,
      relativePath: "repo",
      token: async () => Buffer.from(wrong),
      signal: new AbortController().signal,
    });
    await expect(failed).rejects.toBeInstanceOf(RepositoryCloneError);
    const message = ((await failed.catch((error: unknown) => error)) as Error).message;
    expect(message).toMatch(/authentication failed/);
    expect(message).not.toContain(wrong);
    expect(message).not.toContain(Buffer.from(`x-access-token:${wrong}`).toString("base64"));
    expect(readdirSync(workspace)).toEqual([]);
  });

  it("removes staging directories a crashed clone left behind, once older than twice the timeout", async () => {
    const stagingRoot = join(root, ".clones");
    mkdirSync(join(stagingRoot, "clone-abandoned", "repo"), { recursive: true });
    mkdirSync(join(stagingRoot, "clone-recent"), { recursive: true });
    const old = new Date(Date.now() - 3 * 60_000);
    utimesSync(join(stagingRoot, "clone-abandoned"), old, old);
    await new RepositoryCloner({ policy: loopbackAllowed(), timeoutMs: 60_000 }).clone({
      url: `${server.url}/private-repo.git`,
      checkout: null,
      workspace,
      relativePath: "repo",
      token: tokenOnce().open,
    });
    expect(readdirSync(stagingRoot)).toEqual(["clone-recent"]);
  });

  it("an existing path is left as it is, without opening the token", async () => {
    mkdirSync(join(workspace, "repo"));
    const token = tokenOnce();
    const outcome = await new RepositoryCloner({ policy: loopbackAllowed() }).clone({
      url: `${server.url}/private-repo.git`,
      checkout: null,
      workspace,
      relativePath: "repo",
      token: token.open,
      signal: new AbortController().signal,
    });
    expect(outcome).toEqual({ kind: "present" });
    expect(token.opened()).toBe(0);
  });

  it("refuses what must never reach git: option-like URLs and branches, other protocols, credentials in the URL", async () => {
    const cloner = new RepositoryCloner({ policy: loopbackAllowed() });
    const base = {
      workspace,
      relativePath: "repo",
      token: tokenOnce().open,
      signal: new AbortController().signal,
      checkout: null,
    };
    const refused = async (request: Partial<Parameters<RepositoryCloner["clone"]>[0]>, pattern: RegExp) => {
      await expect(
        cloner.clone({ ...base, url: `${server.url}/private-repo.git`, ...request }),
      ).rejects.toThrow(pattern);
    };
    await refused({ url: "--upload-pack=touch /tmp/pwned" }, /starts with -/);
    await refused({ url: "ext::sh -c touch% /tmp/pwned" }, /only http\(s\)/);
    await refused({ url: `file://${server.root}/repos/private-repo.git` }, /only http\(s\)/);
    await refused({ url: `http://user:${TOKEN}@127.0.0.1:1/x.git` }, /carries credentials/);
    await refused({ checkout: { type: "branch", name: "--upload-pack=touch" } }, /not a valid ref name/);
    await refused({ checkout: { type: "commit", sha: "HEAD~1" } }, /not a hex SHA/);
    await refused({ relativePath: "../escape" }, /inside the workspace/);
    await refused({ relativePath: "/etc/x" }, /inside the workspace/);
    expect(server.log).toEqual([]);
  });

  it("a path through a symlink the sandbox planted is refused, and nothing is written where it points", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "awaken-clone-elsewhere-"));
    try {
      symlinkSync(elsewhere, join(workspace, "link"));
      await expect(
        new RepositoryCloner({ policy: loopbackAllowed() }).clone({
          url: `${server.url}/private-repo.git`,
          checkout: null,
          workspace,
          relativePath: "link/repo",
          token: tokenOnce().open,
          signal: new AbortController().signal,
        }),
      ).rejects.toThrow(/crosses a symlink/);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("checks the resolved address against the policy and pins git to it (no second resolution)", async () => {
    const port = new URL(server.url).port;
    const request = {
      url: `http://git.internal.test:${port}/private-repo.git`,
      checkout: null,
      workspace,
      relativePath: "pinned",
      token: tokenOnce().open,
      signal: new AbortController().signal,
    };
    // Not allow-listed: the loopback address it resolves to is refused before git runs.
    const resolve = async () => ["127.0.0.1"];
    await expect(
      new RepositoryCloner({ policy: OutboundPolicy.publicOnly(), resolve }).clone(request),
    ).rejects.toThrow(/resolves to an address connections made for users may not reach/);
    expect(server.log).toEqual([]);
    // A literal loopback URL without the allow-list: refused too.
    await expect(
      new RepositoryCloner({ policy: OutboundPolicy.publicOnly() }).clone({
        ...request,
        url: `${server.url}/private-repo.git`,
      }),
    ).rejects.toThrow(/is an address connections made for users may not reach/);
    // Allow-listed by name: git connects to the address checked here (the system resolver has
    // never heard of the name, so the clone works only through the pin).
    let resolutions = 0;
    const counted = async () => {
      resolutions += 1;
      return ["127.0.0.1"];
    };
    const outcome = await new RepositoryCloner({
      policy: OutboundPolicy.allowing("git.internal.test"),
      resolve: counted,
    }).clone(request);
    expect(outcome).toMatchObject({ kind: "cloned", head: shas.second });
    expect(resolutions).toBe(1);
  });

  it("stops a clone past its size limit", async () => {
    server.createRepository("big", {
      commits: [{ message: "big", files: { "blob.bin": randomBytes(512 * 1024).toString("base64") } }],
    });
    await expect(
      new RepositoryCloner({ policy: loopbackAllowed(), maxBytes: 64 * 1024, pollMs: 10 }).clone({
        url: `${server.url}/big.git`,
        checkout: null,
        workspace,
        relativePath: "big",
        token: async () => null,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow(/larger than the clone limit/);
    expect(readdirSync(workspace)).toEqual([]);
  });
});
