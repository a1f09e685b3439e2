/**
 * Real git repositories served over git's smart HTTP protocol on the loopback: git's own
 * `git-http-backend` as a CGI behind a small Node HTTP server (the real git server, not a fake).
 * A private repository asks for `Authorization: Bearer <token>` or Basic with the token as the
 * password; anything else is a 401. The server keeps a log of what it served (method, path,
 * whether it was authorized), never a header's value, and separately what authorizations it was
 * sent, so a test can prove the token was used without anything logging it.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BACKEND = "/usr/lib/git-core/git-http-backend";

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Bare repositories live here (`<name>.git`). */
  root: string;
  /** One line per request: never a header's value. */
  log: string[];
  /** Every Authorization header received, for the test to check the token was sent. */
  authorizations: string[];
  /**
   * Makes `<name>.git` with the given commits on `main` and, optionally, more branches; returns
   * each commit's SHA by its message.
   */
  createRepository(name: string, options: RepositoryContent & { token?: string }): Record<string, string>;
  close(): Promise<void>;
}

export interface RepositoryContent {
  /** Commits on `main`, in order: files written (paths relative to the root) and a message. */
  commits: Array<{ message: string; files: Record<string, string> }>;
  /** Branches made from `main`'s last commit, each with one commit of its own. */
  branches?: Record<string, { message: string; files: Record<string, string> }>;
}

const GIT_ENV = {
  PATH: "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  LC_ALL: "C",
};

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
}

export async function startGitHttpServer(): Promise<GitHttpServer> {
  const root = mkdtempSync(join(tmpdir(), "awaken-git-"));
  const reposDir = join(root, "repos");
  mkdirSync(reposDir);
  const tokens = new Map<string, string>();
  const log: string[] = [];
  const authorizations: string[] = [];

  const server: Server = createServer((request, response) => {
    serve(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://localhost");
    const repo = /^\/([A-Za-z0-9_-]+)\.git(\/.*)?$/.exec(url.pathname)?.[1];
    const authorization = request.headers.authorization;
    if (authorization !== undefined) authorizations.push(authorization);
    const token = repo === undefined ? undefined : tokens.get(repo);
    const authorized = token === undefined || authorizes(authorization, token);
    log.push(`${request.method} ${url.pathname} ${authorized ? "authorized" : "refused"}`);
    if (!authorized) {
      response.writeHead(401, { "www-authenticate": 'Basic realm="git"' });
      response.end("authentication required\n");
      return;
    }
    const child = spawn(BACKEND, [], {
      env: {
        ...GIT_ENV,
        GIT_PROJECT_ROOT: reposDir,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        REQUEST_METHOD: request.method ?? "GET",
        QUERY_STRING: url.search.replace(/^\?/, ""),
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
        ...(request.headers["git-protocol"] ? { GIT_PROTOCOL: String(request.headers["git-protocol"]) } : {}),
        ...(request.headers["content-encoding"]
          ? { HTTP_CONTENT_ENCODING: String(request.headers["content-encoding"]) }
          : {}),
      },
      stdio: ["pipe", "pipe", "ignore"],
    });
    request.pipe(child.stdin);
    child.stdin.on("error", () => {});
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      response.write(head.subarray(end + 4));
    });
    await new Promise<void>((resolve) => child.on("close", () => resolve()));
    if (!headersDone) response.writeHead(502);
    response.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    root,
    log,
    authorizations,
    createRepository(name, options) {
      const work = join(root, `work-${name}`);
      mkdirSync(work);
      git(work, ["init", "--quiet", "--initial-branch=main"]);
      const shas: Record<string, string> = {};
      const commit = (step: { message: string; files: Record<string, string> }) => {
        for (const [path, content] of Object.entries(step.files)) {
          const full = join(work, path);
          mkdirSync(join(full, ".."), { recursive: true });
          writeFileSync(full, content);
        }
        git(work, ["add", "--all"]);
        git(work, ["commit", "--quiet", "-m", step.message]);
        shas[step.message] = git(work, ["rev-parse", "HEAD"]);
      };
      for (const step of options.commits) commit(step);
      for (const [branch, step] of Object.entries(options.branches ?? {})) {
        git(work, ["checkout", "--quiet", "-b", branch, "main"]);
        commit(step);
      }
      git(work, ["checkout", "--quiet", "main"]);
      git(reposDir, ["clone", "--quiet", "--bare", work, `${name}.git`]);
      rmSync(work, { recursive: true, force: true });
      if (options.token !== undefined) tokens.set(name, options.token);
      return shas;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** `Bearer <token>`, or Basic whose password is the token (any user name, as forges accept). */
function authorizes(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  if (header === `Bearer ${token}`) return true;
  const basic = /^Basic (.+)$/.exec(header)?.[1];
  if (basic === undefined) return false;
  const decoded = Buffer.from(basic, "base64").toString("utf8");
  return decoded.slice(decoded.indexOf(":") + 1) === token;
}
