/**
 * Clones a session's repository into its workspace on the worker's host, with git run by the
 * worker (never inside the sandbox), then hands the tree to the sandbox's uid.
 *
 * The token is opened for the clone only (`token()` is called only when a clone is needed) and
 * touches exactly one place: the environment of the one `git clone` process, as an
 * `http.extraHeader` config entry (`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`), never its argv (argv is
 * world-readable in /proc), never a file: not `.git/config` (the remote URL carries no credential),
 * not a reflog, FETCH_HEAD or packed-refs (they name the URL only), not a log or an error (git's
 * stderr is scrubbed of it before it is shown). Its Buffer is zeroed as soon as the header is
 * built; the header string cannot be zeroed and lives until garbage collection. The checkout step
 * runs without it. The clone's process environment is built from scratch (nothing of the worker's),
 * so no proxy variable, trace switch (GIT_TRACE_CURL would print headers) or config file applies.
 *
 * What git may do is pinned too: no system or global config (HOME is an empty directory of ours),
 * only the http and https protocols (no ext::, file:, ssh), no redirect (the header would follow
 * it to another host, and so would a private address), no hooks, no submodules, no prompt, no
 * credential helper, objects checked on receipt (`transfer.fsckObjects`). The URL's host is resolved
 * here and every address checked against the outbound policy, then pinned for git
 * (`http.curloptResolve`), so git connects only to the addresses checked: a name that resolves
 * elsewhere a moment later (DNS rebinding) is never asked again. A URL that is not http(s), carries
 * credentials or starts with `-` never reaches git; it is given after `--`.
 *
 * The clone is made in a staging directory of the worker's (`<workspace root>/.clones`, on the
 * workspace's filesystem, closed to sandboxes), given to the sandbox's uid entry by entry with
 * lchown, then moved into the workspace with one rename(2) whose parent is reached through an open
 * directory descriptor walked component by component with O_NOFOLLOW: a symlink a sandbox process
 * plants on the way is refused, never followed, so the host-side move cannot be redirected.
 */
import { lookup } from "node:dns/promises";
import { closeSync, constants, fchownSync, mkdirSync, openSync } from "node:fs";
import { chmod, lchown, lstat, mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { isIP } from "node:net";
import { join, posix } from "node:path";
import { PlatformError } from "../kernel/errors.js";
import type { OutboundPolicy } from "../kernel/outboundPolicy.js";
import type { SandboxRepository } from "./ports.js";
import { execInProcessGroup } from "./processExec.js";
import type { HostOwner } from "./sandboxWorkspace.js";
import { workspaceUsage } from "./workspaceQuota.js";
import { workspaceDirectory } from "./workspaces.js";

export type RepositoryCheckout = { type: "branch"; name: string } | { type: "commit"; sha: string } | null;

export interface RepositoryCloneRequest {
  url: string;
  checkout: RepositoryCheckout;
  /** The session's host workspace (what the sandbox sees at /workspace). */
  workspace: string;
  /** Where the clone goes, relative to the workspace (`repo`, `src/repo`): normalized, no `..`. */
  relativePath: string;
  /** Opens the repository's token (null: a public repository); called only when a clone is needed. */
  token: () => Promise<Buffer | null>;
  /** Aborting kills git (worker shutdown). */
  signal?: AbortSignal;
}

export type RepositoryCloneOutcome =
  | { kind: "cloned"; head: string }
  /** Something is already at the path (an earlier run's clone, or the agent's own files): left as is. */
  | { kind: "present" };

export interface RepositoryClonerOptions {
  /** The address policy every connection made for a user obeys (its allow-list admits private hosts). */
  policy: OutboundPolicy;
  /** Whole clone and checkout; past it git is killed and the clone fails. Default 10 minutes. */
  timeoutMs?: number;
  /** Bytes the clone (objects and checkout) may take on disk; past it git is killed. Default 2 GiB. */
  maxBytes?: number;
  /** How often the size is measured while git runs. */
  pollMs?: number;
  /** Resolves a host to every address (default: the host's resolver). Tests play DNS games with it. */
  resolve?: (host: string) => Promise<string[]>;
}

export const DEFAULT_CLONE_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_CLONE_MAX_BYTES = 2 * 1024 * 1024 * 1024;
const STAGING_DIR = ".clones";
/** Git's stderr kept for the error message (its end says why). */
const MAX_OUTPUT_BYTES = 64 * 1024;

/** A clone that failed: the message is secret-free (git's stderr scrubbed of the token). */
export class RepositoryCloneError extends PlatformError {
  constructor(message: string) {
    super("repository_clone_failed", message);
    this.name = "RepositoryCloneError";
  }
}

export class RepositoryCloner {
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly pollMs: number;
  private readonly resolve: (host: string) => Promise<string[]>;

  constructor(private readonly options: RepositoryClonerOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CLONE_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? DEFAULT_CLONE_MAX_BYTES;
    this.pollMs = options.pollMs ?? 500;
    this.resolve = options.resolve ?? systemResolve;
  }

  /**
   * Clones a session's repository (`SandboxSpec.repositories`) into its workspace under
   * `workspaceRoot`: `/workspace/<path>` inside the sandbox is `<workspace>/<path>` on the host.
   */
  cloneForSession(
    workspaceRoot: string,
    sessionId: string,
    repository: SandboxRepository,
  ): Promise<RepositoryCloneOutcome> {
    const prefix = "/workspace/";
    if (!repository.sandboxPath.startsWith(prefix))
      return Promise.reject(
        new RepositoryCloneError(
          `a repository is cloned under /workspace, not at ${repository.sandboxPath.slice(0, 200)}`,
        ),
      );
    return this.clone({
      url: repository.url,
      checkout: repository.checkout,
      workspace: workspaceDirectory(workspaceRoot, sessionId),
      relativePath: repository.sandboxPath.slice(prefix.length),
      token: () => repository.token(),
    });
  }

  async clone(request: RepositoryCloneRequest): Promise<RepositoryCloneOutcome> {
    const signal = request.signal ?? new AbortController().signal;
    const url = checkedUrl(request.url);
    const checkout = checkedCheckout(request.checkout);
    const parts = checkedRelativePath(request.relativePath);
    const name = parts[parts.length - 1] as string;
    // The owner the tier gave the workspace (prepareWorkspace): the clone becomes the sandbox's.
    const workspaceStat = await lstat(request.workspace);
    if (!workspaceStat.isDirectory())
      throw new RepositoryCloneError("the session's workspace is not a directory");
    const owner: HostOwner = { uid: workspaceStat.uid, gid: workspaceStat.gid };

    // Reached without following a link: an earlier clone (or the agent's own files) stays.
    const parent = openParent(request.workspace, parts.slice(0, -1), owner);
    try {
      if (await exists(join(fdPath(parent), name))) return { kind: "present" };
      const pinned = await this.pinnedAddress(url);
      const root = posix.dirname(request.workspace);
      const stagingRoot = join(root, STAGING_DIR);
      await mkdir(stagingRoot, { recursive: true, mode: 0o700 });
      await this.removeAbandoned(stagingRoot);
      const staging = await mkdtemp(join(stagingRoot, "clone-"));
      try {
        const home = join(staging, "home");
        const target = join(staging, "repo");
        await mkdir(home, { mode: 0o700 });
        const token = await request.token();
        const env = gitEnvironment(home, pinned, token);
        const secrets = token === null ? [] : secretForms(token);
        token?.fill(0);
        const cloneArgs = ["clone", "--no-checkout", "--no-recurse-submodules"];
        if (checkout?.type === "branch") cloneArgs.push(`--branch=${checkout.name}`, "--single-branch");
        await this.git(cloneArgs.concat(["--", url.href, target]), env, staging, signal, secrets);
        // The checkout needs no network: it runs without the token in its environment.
        const local = gitEnvironment(home, null, null);
        const ref = checkout?.type === "commit" ? checkout.sha : "HEAD";
        await this.git(
          [
            "-C",
            target,
            "checkout",
            "--quiet",
            ...(checkout?.type === "commit" ? ["--detach"] : []),
            ref,
            "--",
          ],
          local,
          staging,
          signal,
          [],
        );
        const head = (await this.git(["-C", target, "rev-parse", "HEAD"], local, staging, signal, [])).trim();
        // Measured once more whole: a clone that finished between two measurements is bounded too.
        if ((await workspaceUsage(target)).bytes > this.maxBytes)
          throw new RepositoryCloneError(
            `the repository is larger than the clone limit (${this.maxBytes} bytes)`,
          );
        await chownTree(target, owner);
        await chmod(target, 0o755);
        // One rename, relative to the parent's descriptor: nothing on the way is followed.
        await rename(target, join(fdPath(parent), name));
        return { kind: "cloned", head };
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    } finally {
      closeSync(parent);
    }
  }

  /**
   * Staging directories a crashed worker left (a clone never runs longer than its timeout, so one
   * older than twice that is nobody's): removed, so they cannot pile up on the workspaces' disk.
   */
  private async removeAbandoned(stagingRoot: string): Promise<void> {
    const cutoff = Date.now() - 2 * this.timeoutMs;
    for (const name of await readdir(stagingRoot).catch(() => [] as string[])) {
      const path = join(stagingRoot, name);
      const info = await lstat(path).catch(() => null);
      if (info && info.mtimeMs < cutoff) await rm(path, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** `host:port:address` for git to connect to, every address checked; null for a literal IP. */
  private async pinnedAddress(url: URL): Promise<string | null> {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    const literal = isIP(host) !== 0;
    let addresses: string[];
    try {
      addresses = literal ? [host] : await this.resolve(host);
    } catch {
      throw new RepositoryCloneError(`${host} does not resolve`);
    }
    if (addresses.length === 0) throw new RepositoryCloneError(`${host} does not resolve`);
    for (const address of addresses) {
      if (!this.options.policy.allows(host, address))
        throw new RepositoryCloneError(
          `${host} ${literal ? "is" : "resolves to"} an address connections made for users may not reach ` +
            "(loopback, link-local, private or reserved; the operator's allow-list admits such hosts)",
        );
    }
    if (literal) return null;
    const listed = addresses.map((address) => (isIP(address) === 6 ? `[${address}]` : address)).join(",");
    return `${host}:${port}:${listed}`;
  }

  /** Runs git as this process, watching the size of the staging tree; stdout on success. */
  private async git(
    args: string[],
    env: Record<string, string>,
    staging: string,
    signal: AbortSignal,
    secrets: string[],
  ): Promise<string> {
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    let tooLarge = false;
    const watch = setInterval(() => {
      workspaceUsage(staging).then(
        (usage) => {
          if (usage.bytes > this.maxBytes && !stop.signal.aborted) {
            tooLarge = true;
            stop.abort(new Error("too large"));
          }
        },
        () => {},
      );
    }, this.pollMs);
    try {
      const result = await execInProcessGroup(
        "git",
        args,
        { timeoutMs: this.timeoutMs, maxOutputBytes: MAX_OUTPUT_BYTES, signal: stop.signal },
        { env, cwd: staging, stdio: ["ignore", "pipe", "pipe"] },
      ).catch((error: unknown) => {
        if (tooLarge)
          throw new RepositoryCloneError(
            `the repository is larger than the clone limit (${this.maxBytes} bytes)`,
          );
        if (signal.aborted) throw error;
        throw new RepositoryCloneError(`git could not run: ${scrub(String(error), secrets)}`);
      });
      if (result.timedOut)
        throw new RepositoryCloneError(
          `the clone did not finish within ${Math.round(this.timeoutMs / 1000)} s`,
        );
      if (result.exitCode !== 0)
        throw new RepositoryCloneError(
          `git ${args[0] === "-C" ? args[2] : args[0]} failed: ${gitReason(scrub(result.stderr, secrets))}`,
        );
      return result.stdout;
    } finally {
      clearInterval(watch);
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/** The URL as git gets it: http(s) only, no credentials, not an option. */
function checkedUrl(raw: string): URL {
  if (raw.startsWith("-")) throw new RepositoryCloneError("the repository URL starts with -");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RepositoryCloneError("the repository URL is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new RepositoryCloneError("only http(s) repository URLs are cloned");
  if (url.username !== "" || url.password !== "")
    throw new RepositoryCloneError("the repository URL carries credentials");
  return url;
}

/** The checkout as git arguments: a branch never starts with `-`, a commit is hex. */
function checkedCheckout(checkout: RepositoryCheckout): RepositoryCheckout {
  if (checkout === null) return null;
  if (checkout.type === "commit") {
    if (!/^[0-9a-f]{7,64}$/i.test(checkout.sha))
      throw new RepositoryCloneError("the commit is not a hex SHA");
    return checkout;
  }
  if (
    checkout.name === "" ||
    checkout.name.startsWith("-") ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    /[\u0000-\u0020\u007f~^:?*[\\]/.test(checkout.name)
  )
    throw new RepositoryCloneError("the branch name is not a valid ref name");
  return checkout;
}

function checkedRelativePath(path: string): string[] {
  const parts = path.split("/");
  if (
    path === "" ||
    path.includes("\0") ||
    posix.normalize(path) !== path ||
    path.startsWith("/") ||
    parts.some((part) => part === "" || part === "." || part === "..")
  )
    throw new RepositoryCloneError("the clone's path must be a normalized path inside the workspace");
  return parts;
}

/**
 * The clone's parent directory, opened by walking from the workspace one component at a time with
 * O_NOFOLLOW (each step through the previous descriptor's /proc/self/fd link): a missing one is
 * made (the sandbox's), a symlink anywhere is refused. The caller closes the descriptor.
 */
function openParent(workspace: string, parents: string[], owner: HostOwner): number {
  const flags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
  let fd = openSync(workspace, flags);
  try {
    for (const part of parents) {
      const next = join(fdPath(fd), part);
      try {
        mkdirSync(next, { mode: 0o755 });
        // A directory the worker made for the sandbox is the sandbox's, like the clone.
        fchownPath(next, owner);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const child = openSync(next, flags);
      closeSync(fd);
      fd = child;
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR")
      throw new RepositoryCloneError("the clone's path crosses a symlink or a file in the workspace");
    throw error;
  }
}

function fchownPath(path: string, owner: HostOwner): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchownSync(fd, owner.uid, owner.gid);
  } finally {
    closeSync(fd);
  }
}

/** The path that names an open descriptor's directory exactly (not a path that could be swapped). */
function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/**
 * git's environment, from scratch: config only from here (`GIT_CONFIG_*`), the token (when given)
 * as an `http.extraHeader` in it and nowhere else.
 */
function gitEnvironment(home: string, pinned: string | null, token: Buffer | null): Record<string, string> {
  const config: Array<[string, string]> = [
    ["protocol.allow", "never"],
    ["protocol.http.allow", "always"],
    ["protocol.https.allow", "always"],
    ["core.hooksPath", "/dev/null"],
    ["core.askPass", ""],
    ["credential.helper", ""],
    ["http.followRedirects", "false"],
    ["submodule.recurse", "false"],
    ["fetch.recurseSubmodules", "false"],
    ["transfer.fsckObjects", "true"],
    ["advice.detachedHead", "false"],
    ["init.defaultBranch", "main"],
  ];
  if (pinned !== null) config.push(["http.curloptResolve", pinned]);
  if (token !== null) {
    // GitHub and most forges take a token as the password of Basic authentication.
    const basic = Buffer.concat([Buffer.from("x-access-token:"), token]);
    config.push(["http.extraHeader", `Authorization: Basic ${basic.toString("base64")}`]);
    basic.fill(0);
  }
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ALLOW_PROTOCOL: "http:https",
    GIT_TEMPLATE_DIR: home,
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Every form the token could take in git's output: as is, and inside the Basic header. */
function secretForms(token: Buffer): string[] {
  const basic = Buffer.concat([Buffer.from("x-access-token:"), token]);
  const forms = [token.toString("utf8"), basic.toString("base64")];
  basic.fill(0);
  return forms.filter((form) => form.length > 0);
}

function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join("[redacted]");
  return out;
}

/** git's last fatal line, said plainly for the common cases. */
function gitReason(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const fatal = lines.filter((line) => /^(fatal|error):/.test(line)).pop() ?? lines.pop() ?? "no output";
  if (/could not read Username|Authentication failed|401|403/.test(stderr))
    return `authentication failed (check the repository's authorization_token): ${fatal.slice(0, 500)}`;
  return fatal.slice(0, 500);
}

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );

/** Every entry of the staged tree to the sandbox's uid, never following a link. */
async function chownTree(path: string, owner: HostOwner): Promise<void> {
  await lchown(path, owner.uid, owner.gid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, owner);
    else await lchown(child, owner.uid, owner.gid);
  }
}
