/**
 * Session resources on a remote worker: a coordinator with no worker of its own (`--workers 0`)
 * and one `awaken worker` child process, which holds no database handle and reaches the session's
 * resources only through the worker transport's claim-checked resource routes. The agent (the
 * offline model, calling the tool it is asked to) reads a pinned skill's file (a blob read over
 * the transport), writes a memory whose write-back lands as a new version, and finds a private
 * repository cloned into its workspace; the repository's token reaches the git server and nothing
 * else: not the workspace, the data dirs, either process's output or any committed event.
 *
 * The same worker realizes the bwrap tier (the default) too: there the agent reads an uploaded file
 * at its mount path, writes a mounted memory store from a shell command (written back as a new
 * version over the transport), and finds the private repository cloned into its workspace with the
 * token in no process of the sandbox's uid. Those cases need bubblewrap on the host.
 */
import { execFileSync } from "node:child_process";
import { type Dirent, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toFile } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHttpServer, startGitHttpServer } from "../support/gitHttpServer.js";
import { history, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const KEY = "sk-awaken-remote-resources-test";
const TOKEN = "worker-token-remote-resources-0123456789";
const REPO_TOKEN = `ghp_remote_${Math.random().toString(36).slice(2)}${Date.now()}`;
const BWRAP_REPO_TOKEN = `ghp_remote_bwrap_${Math.random().toString(36).slice(2)}${Date.now()}`;
const MODEL = "claude-sonnet-4-6";

const isEnd = (e: WireEvent) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action";
const ended = (events: WireEvent[]) => events.some(isEnd);
const TOOLS = [
  { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
];
const bashCall = (command: string) => `call bash ${JSON.stringify({ command })}`;

/** The text of the last turn's tool results (after its user message). */
function lastResults(events: WireEvent[]): Array<{ text: string; isError: boolean | undefined }> {
  return events
    .slice(events.map((e) => e.type).lastIndexOf("user.message"))
    .filter((e) => e.type === "agent.tool_result")
    .map((e) => {
      const result = e as { content?: Array<{ text?: string }>; is_error?: boolean };
      return { text: result.content?.map((c) => c.text ?? "").join("") ?? "", isError: result.is_error };
    });
}

/** Every host process whose real uid is `uid`: its command line and environment. */
function processesOf(uid: number): Array<{ cmdline: string; environ: string }> {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) continue;
      const read = (what: string) => readFileSync(`/proc/${pid}/${what}`, "latin1").split("\0").join("\n");
      found.push({ cmdline: read("cmdline"), environ: read("environ") });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

/** Every file under `dir` (links not followed) whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesHolding(path, needle));
    else if (entry.isFile() && readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

describe("session resources on a remote worker", () => {
  let dataDir: string;
  let server: ServerProcess;
  let worker: WorkerProcess;
  let git: GitHttpServer;
  let environmentId: string;
  let bwrapEnvironmentId: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-remote-resources-"));
    git = await startGitHttpServer();
    server = await startServerProcess({
      dataDir: join(dataDir, "coordinator"),
      apiKey: KEY,
      env: { AWAKEN_WORKER_TOKEN: TOKEN, AWAKEN_LOG_LEVEL: "trace" },
      // The repository's URL names the loopback: the operator allow-lists it (checked at creation).
      args: ["--workers", "0", "--allow-unsandboxed-tier", "--allow-private-mcp-host", "127.0.0.1"],
    });
    // The worker clones from the loopback too: the same allow-list on its host.
    worker = await startWorker(server.url, TOKEN, { AWAKEN_LOG_LEVEL: "trace" }, [
      "--workspace-dir",
      join(dataDir, "worker-workspaces"),
      "--allow-unsandboxed-tier",
      "--allow-private-mcp-host",
      "127.0.0.1",
    ]);
    const environment = await server.client.beta.environments.create({
      name: "remote-resources",
      // Resources are realized before the first tool call: eager provisioning.
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    environmentId = environment.id;
    const bwrap = await server.client.beta.environments.create({
      name: "remote-resources-bwrap",
      config: { type: "cloud", sandbox: { tier: "bwrap", provisioning: "eager" } } as never,
    });
    bwrapEnvironmentId = bwrap.id;
  }, 60_000);

  afterAll(async () => {
    for (const p of [worker, server]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
    await Promise.all([worker?.exited, server?.exited]);
    await git?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function turn(sessionId: string, text: string): Promise<WireEvent[]> {
    await server.client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] });
    return waitForHistory(server.client, sessionId, ended, 30_000);
  }

  it("reads a pinned skill's file through the transport", async () => {
    const client = server.client;
    const skill = await client.beta.skills.create({
      files: [
        await toFile(
          Buffer.from("---\nname: remote-notes\ndescription: Notes kept remotely.\n---\nREMOTE SKILL BODY\n"),
          "remote-notes/SKILL.md",
          { type: "text/markdown" },
        ),
      ],
    } as never);
    const agent = await client.beta.agents.create({
      name: "remote-skill-user",
      model: MODEL,
      skills: [{ type: "custom", skill_id: skill.id }],
    } as never);
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environmentId });
    const events = await turn(session.id, 'call load_skill {"name": "remote-notes"}');
    const result = events.find((e) => e.type === "agent.tool_result") as
      | { content?: Array<{ text?: string }>; is_error?: boolean }
      | undefined;
    expect(result?.is_error).toBe(false);
    expect(result?.content?.map((c) => c.text).join("")).toContain("REMOTE SKILL BODY");
  }, 40_000);

  it("writes a memory back as a new version, under the remote run's claim", async () => {
    const client = server.client;
    const store = await client.beta.memoryStores.create({ name: "remote-store" });
    const agent = await client.beta.agents.create({ name: "remote-memory-user", model: MODEL } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      resources: [{ type: "memory_store", memory_store_id: store.id }],
    });
    const events = await turn(
      session.id,
      'call memory_write {"path": "notes/remote.md", "content": "written by the remote worker"}',
    );
    const result = events.find((e) => e.type === "agent.tool_result") as { is_error?: boolean } | undefined;
    expect(result?.is_error).toBe(false);
    const memories = [];
    for await (const item of client.beta.memoryStores.memories.list(store.id)) memories.push(item);
    expect(memories).toHaveLength(1);
    const memory = await client.beta.memoryStores.memories.retrieve((memories[0] as { id: string }).id, {
      memory_store_id: store.id,
    } as never);
    expect(memory).toMatchObject({ path: "/notes/remote.md", content: "written by the remote worker" });
    const versions = [];
    for await (const item of client.beta.memoryStores.memoryVersions.list(store.id)) versions.push(item);
    expect(versions.length).toBe(1);
  }, 40_000);

  it("clones a private repository into the remote workspace; the token lands nowhere but on the git server", async () => {
    const client = server.client;
    const shas = git.createRepository("remote-private", {
      token: REPO_TOKEN,
      commits: [{ message: "initial", files: { "README.md": "remote private repository\n" } }],
      branches: { release: { message: "release commit", files: { "RELEASE.md": "release notes\n" } } },
    });
    const agent = await client.beta.agents.create({
      name: "remote-repo-user",
      model: MODEL,
      tools: [
        { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
      ],
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      resources: [
        {
          type: "github_repository",
          url: `${git.url}/remote-private.git`,
          authorization_token: REPO_TOKEN,
          checkout: { type: "branch", name: "release" },
        },
      ],
    });
    const events = await turn(
      session.id,
      // `env`: the sandbox's own environment, which must not hold the token either.
      'call bash {"command": "cd remote-private && git log --format=%H:%s -n 1 && cat RELEASE.md && env"}',
    );
    const result = events.find((e) => e.type === "agent.tool_result") as
      | { content?: Array<{ text?: string }>; is_error?: boolean }
      | undefined;
    const text = result?.content?.map((c) => c.text).join("") ?? JSON.stringify(events);
    expect(text).toContain(`${shas["release commit"]}:release commit`);
    expect(text).toContain("release notes");

    // The server was sent the token; nothing else holds it.
    const basic = Buffer.from(`x-access-token:${REPO_TOKEN}`).toString("base64");
    expect(git.authorizations).toContain(`Basic ${basic}`);
    for (const needle of [REPO_TOKEN, basic]) {
      expect(filesHolding(dataDir, needle)).toEqual([]);
      expect(worker.stdout() + worker.stderr()).not.toContain(needle);
      expect(server.stdout() + server.stderr()).not.toContain(needle);
      expect(git.log.join("\n")).not.toContain(needle);
      expect(JSON.stringify(events)).not.toContain(needle);
    }
    const workspace = join(dataDir, "worker-workspaces", session.id, "remote-private");
    expect(
      execFileSync("git", ["-C", workspace, "config", "--get", "remote.origin.url"], {
        encoding: "utf8",
      }).trim(),
    ).toBe(`${git.url}/remote-private.git`);
  }, 60_000);

  it("a wrong token fails the run with a clear clone error that does not carry it", async () => {
    const client = server.client;
    git.createRepository("remote-wrong", {
      token: "the-right-token-for-remote-wrong",
      commits: [{ message: "initial", files: { "README.md": "x\n" } }],
    });
    const wrong = `ghp_wrong_${Math.random().toString(36).slice(2)}`;
    const agent = await client.beta.agents.create({ name: "remote-wrong-user", model: MODEL } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      resources: [
        { type: "github_repository", url: `${git.url}/remote-wrong.git`, authorization_token: wrong },
      ],
    });
    const events = await turn(session.id, "hello");
    const error = events.find((e) => e.type === "session.error") as
      | { error?: { message?: string } }
      | undefined;
    expect(error?.error?.message).toMatch(/could not be cloned.*authentication failed/s);
    expect(JSON.stringify(events)).not.toContain(wrong);
    expect(worker.stdout() + worker.stderr()).not.toContain(wrong);
  }, 40_000);
  it("bwrap: the agent reads an uploaded file at /mnt/session/uploads/<file_id>, read-only", async () => {
    const client = server.client;
    const file = await client.beta.files.upload({
      file: await toFile(Buffer.from("remote upload: 1729\n"), "upload.txt", { type: "text/plain" }),
    });
    const agent = await client.beta.agents.create({
      name: "remote-file-reader",
      model: MODEL,
      tools: TOOLS,
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: bwrapEnvironmentId,
      resources: [{ type: "file", file_id: file.id }],
    });
    const path = `/mnt/session/uploads/${file.id}`;
    const [result] = lastResults(
      await turn(session.id, bashCall(`cat ${path}; echo x >> ${path} || echo REFUSED`)),
    );
    expect(result?.text).toContain("remote upload: 1729");
    expect(result?.text).toMatch(/Read-only file system|Permission denied/);
    expect(result?.text).toContain("REFUSED");
  }, 60_000);

  it("bwrap: a read-write memory store written from a shell command becomes a new version", async () => {
    const client = server.client;
    const store = await client.beta.memoryStores.create({ name: "remote-mounted" });
    await client.beta.memoryStores.memories.create(store.id, { path: "/seen.md", content: "already there" });
    const agent = await client.beta.agents.create({
      name: "remote-memory-writer",
      model: MODEL,
      tools: TOOLS,
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: bwrapEnvironmentId,
      resources: [{ type: "memory_store", memory_store_id: store.id }],
    });
    const [result] = lastResults(
      await turn(
        session.id,
        bashCall(
          "cat /mnt/memory/remote-mounted/seen.md && mkdir -p /mnt/memory/remote-mounted/notes && " +
            "echo -n 'written from a bwrap sandbox' > /mnt/memory/remote-mounted/notes/bwrap.md",
        ),
      ),
    );
    expect(result, JSON.stringify(result)).toMatchObject({ isError: false });
    expect(result?.text).toContain("already there");
    const versions = [];
    for await (const item of client.beta.memoryStores.memoryVersions.list(store.id)) versions.push(item);
    // The one created through the API, and the agent's.
    expect(versions).toHaveLength(2);
    const listed = [];
    for await (const item of client.beta.memoryStores.memories.list(store.id))
      listed.push(item as { id: string; path?: string });
    expect(listed.map((m) => m.path).sort()).toEqual(["/notes/bwrap.md", "/seen.md"]);
    const written = listed.find((m) => m.path === "/notes/bwrap.md") as { id: string };
    const memory = await client.beta.memoryStores.memories.retrieve(written.id, {
      memory_store_id: store.id,
    } as never);
    expect(memory).toMatchObject({ content: "written from a bwrap sandbox" });
  }, 60_000);

  it("bwrap: a private repository cloned into the sandbox; its token in no sandbox process, workspace file, log or event", async () => {
    const client = server.client;
    const shas = git.createRepository("remote-bwrap", {
      token: BWRAP_REPO_TOKEN,
      commits: [
        { message: "first", files: { "README.md": "bwrap first version\n" } },
        { message: "second", files: { "README.md": "bwrap second version\n" } },
      ],
    });
    const agent = await client.beta.agents.create({
      name: "remote-bwrap-repo-user",
      model: MODEL,
      tools: TOOLS,
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: bwrapEnvironmentId,
      resources: [
        {
          type: "github_repository",
          url: `${git.url}/remote-bwrap.git`,
          authorization_token: BWRAP_REPO_TOKEN,
          checkout: { type: "commit", sha: shas.first as string },
          mount_path: "/workspace/src/remote-bwrap",
        },
      ],
    });
    const [result] = lastResults(
      await turn(
        session.id,
        bashCall(
          "cd /workspace/src/remote-bwrap && git log --format=%H:%s -n 1 && git status --porcelain && " +
            "cat README.md && echo ENVIRON && cat /proc/self/environ | tr '\\0' '\\n' && echo ENV && env",
        ),
      ),
    );
    const text = result?.text ?? "";
    expect(result?.isError, text).toBe(false);
    expect(text).toContain(`${shas.first}:first\nbwrap first version\n`);
    expect(text).not.toContain("second version");
    expect(text).toMatch(/ENVIRON\n[\s\S]*PATH=[\s\S]*ENV\n[\s\S]*PATH=/);

    // Every process of the sandbox's uid on the worker's host, read from /proc while a command runs.
    const workspace = join(dataDir, "worker-workspaces", session.id);
    const sandboxUid = lstatSync(workspace).uid;
    expect(sandboxUid).toBeGreaterThan(0);
    const before = (await history(client, session.id)).filter(isEnd).length;
    await client.beta.sessions.events.send(session.id, { events: [userMessage(bashCall("sleep 8"))] });
    await waitForHistory(
      client,
      session.id,
      (h) => h.some((e) => e.type === "agent.tool_use" && JSON.stringify(e).includes("sleep 8")),
      20_000,
    );
    let running = processesOf(sandboxUid);
    for (let i = 0; i < 100 && !running.some((p) => /^sleep\n8/m.test(p.cmdline)); i++) {
      await new Promise((r) => setTimeout(r, 50));
      running = processesOf(sandboxUid);
    }
    expect(running.map((p) => p.cmdline).join("\n")).toMatch(/^sleep\n8/m);
    expect(running.some((p) => p.environ.includes("PATH="))).toBe(true);
    await waitForHistory(client, session.id, (h) => h.filter(isEnd).length > before, 30_000);

    const basic = Buffer.from(`x-access-token:${BWRAP_REPO_TOKEN}`).toString("base64");
    expect(git.authorizations).toContain(`Basic ${basic}`);
    const committed = [];
    for await (const event of client.beta.sessions.events.list(session.id)) committed.push(event);
    // The walk reaches the clone (so an empty answer below means something).
    expect(filesHolding(workspace, "bwrap first version")).toEqual([
      join(workspace, "src", "remote-bwrap", "README.md"),
    ]);
    for (const needle of [BWRAP_REPO_TOKEN, basic]) {
      expect(text).not.toContain(needle);
      for (const process of running) expect(process.environ, process.cmdline).not.toContain(needle);
      // The worker's workspaces (the clone's .git included) and mounts, the coordinator's data dir.
      expect(filesHolding(dataDir, needle)).toEqual([]);
      expect(worker.stdout() + worker.stderr()).not.toContain(needle);
      expect(server.stdout() + server.stderr()).not.toContain(needle);
      expect(git.log.join("\n")).not.toContain(needle);
      expect(JSON.stringify(committed)).not.toContain(needle);
    }
  }, 90_000);
});
