/**
 * Repository resources through the SDK, on the all-in-one server's own workers, on the unsandboxed
 * tier and in the bwrap sandbox (the default tier): a private
 * repository served by git's smart HTTP backend on the loopback (allow-listed by the operator, as
 * a private host must be) is cloned into the session's workspace at the commit asked for, before
 * the agent's first tool call; the agent's `git log` and `cat` see it. The token reaches the git
 * server and nothing else: not the workspace (`.git` included), the data dir (database, blobs,
 * mounts), the server's log, any committed event, the sandbox's processes' environment (printed
 * from inside, and read from the host in /proc while a command runs). A wrong token fails the run
 * with a clear clone error that does not carry it.
 *
 * The bwrap case needs bubblewrap on the host, as every bwrap test does.
 */
import { type Dirent, existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type Anthropic, toFile } from "@anthropic-ai/sdk";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHttpServer, startGitHttpServer } from "../support/gitHttpServer.js";
import { MODEL, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";

const REPO_TOKEN = `ghp_inproc_${Math.random().toString(36).slice(2)}${Date.now()}`;
const BWRAP_TOKEN = `ghp_bwrap_${Math.random().toString(36).slice(2)}${Date.now()}`;

const isEnd = (e: WireEvent) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action";
const ended = (events: WireEvent[]) => events.some(isEnd);
const endedTurns = (events: WireEvent[]) => events.filter(isEnd).length;

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

/** Every host process whose real uid is `uid`: its pid, command line and environment. */
function processesOf(uid: number): Array<{ pid: string; cmdline: string; environ: string }> {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) continue;
      const read = (what: string) => readFileSync(`/proc/${pid}/${what}`, "latin1").split("\0").join("\n");
      found.push({ pid, cmdline: read("cmdline"), environ: read("environ") });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

const bashCall = (command: string) => `call bash ${JSON.stringify({ command })}`;

describe("github_repository resources on the server's own workers", () => {
  let testServer: TestServer;
  let client: Anthropic;
  let git: GitHttpServer;
  let environmentId: string;
  let bwrapEnvironmentId: string;
  let shas: Record<string, string>;
  const logLines: string[] = [];

  beforeAll(async () => {
    git = await startGitHttpServer();
    shas = git.createRepository("inproc", {
      token: REPO_TOKEN,
      commits: [
        { message: "first", files: { "README.md": "first version\n" } },
        { message: "second", files: { "README.md": "second version\n" } },
      ],
    });
    git.createRepository("inproc-wrong", {
      token: "the-right-token-for-inproc-wrong",
      commits: [{ message: "only", files: { "README.md": "x\n" } }],
    });
    // Every line the server logs, at its most verbose, to be searched for the token.
    const logged = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    testServer = await startTestServer({
      allowWeakerTiers: true,
      allowPrivateHosts: LOOPBACK,
      logger: pino({ level: "trace" }, logged),
    });
    client = testServer.client;
    const environment = await client.beta.environments.create({
      name: "repositories",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    environmentId = environment.id;
    const bwrap = await client.beta.environments.create({
      name: "repositories-bwrap",
      config: { type: "cloud", sandbox: { tier: "bwrap", provisioning: "eager" } } as never,
    });
    bwrapEnvironmentId = bwrap.id;
  }, 30_000);

  afterAll(async () => {
    await testServer?.close();
    await git?.close();
  });

  async function turn(sessionId: string, text: string): Promise<WireEvent[]> {
    await client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] });
    return waitForHistory(client, sessionId, ended, 30_000);
  }

  it("clones the commit asked for; the agent sees it; the token is nowhere but on the git server", async () => {
    const agent = await client.beta.agents.create({
      name: "repo-reader",
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
          url: `${git.url}/inproc.git`,
          authorization_token: REPO_TOKEN,
          checkout: { type: "commit", sha: shas.first as string },
          mount_path: "/workspace/src/inproc",
        },
      ],
    });
    const events = await turn(
      session.id,
      'call bash {"command": "cd src/inproc && git log --format=%H -n 1 && cat README.md && tr \\"\\\\0\\" \\"\\\\n\\" < /proc/self/environ && tr \\"\\\\0\\" \\"\\\\n\\" < /proc/$PPID/environ"}',
    );
    const result = events.find((e) => e.type === "agent.tool_result") as
      | { content?: Array<{ text?: string }>; is_error?: boolean }
      | undefined;
    const text = result?.content?.map((c) => c.text).join("") ?? JSON.stringify(events);
    expect(text).toContain(shas.first);
    expect(text).toContain("first version");
    expect(text).not.toContain("second version");
    // The sandbox's processes' environment was printed: the token is not in it (nor anywhere in events).
    expect(text).toMatch(/PATH=/);

    const basic = Buffer.from(`x-access-token:${REPO_TOKEN}`).toString("base64");
    expect(git.authorizations).toContain(`Basic ${basic}`);
    const committed = [];
    for await (const event of client.beta.sessions.events.list(session.id)) committed.push(event);
    for (const needle of [REPO_TOKEN, basic]) {
      expect(JSON.stringify(committed)).not.toContain(needle);
      expect(filesHolding(testServer.dataDir, needle)).toEqual([]);
      expect(git.log.join("\n")).not.toContain(needle);
    }
  }, 40_000);

  it("in the bwrap sandbox: the branch asked for at /workspace/<repo>; the token in no file, log, event or sandbox process", async () => {
    const repoShas = git.createRepository("inbwrap", {
      token: BWRAP_TOKEN,
      commits: [{ message: "initial", files: { "README.md": "main branch\n" } }],
      branches: { feature: { message: "feature commit", files: { "FEATURE.md": "feature notes\n" } } },
    });
    const notes = await client.beta.files.upload({
      file: await toFile(Buffer.from("mounted beside the repository\n"), "notes.txt", { type: "text/plain" }),
    });
    const agent = await client.beta.agents.create({
      name: "repo-reader-bwrap",
      model: MODEL,
      tools: [
        { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
      ],
    } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: bwrapEnvironmentId,
      resources: [
        {
          type: "github_repository",
          url: `${git.url}/inbwrap.git`,
          authorization_token: BWRAP_TOKEN,
          checkout: { type: "branch", name: "feature" },
        },
        // A mounted file beside it: the session has a mount area under the data dir too.
        { type: "file", file_id: notes.id, mount_path: "/mnt/data/notes.txt" },
      ],
    });
    // Inside the sandbox: the clone at /workspace/inbwrap, on the branch, and every environment a
    // command can read (its own, its shell's parent, the namespace's init).
    const first = await turn(
      session.id,
      bashCall(
        "cd /workspace/inbwrap && pwd && git rev-parse --abbrev-ref HEAD && git log --format=%H:%s -n 1 && " +
          "cat FEATURE.md README.md /mnt/data/notes.txt && echo ENVIRON && cat /proc/self/environ | tr '\\0' '\\n' && " +
          "cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'; echo ENV && env",
      ),
    );
    const result = first.find((e) => e.type === "agent.tool_result") as
      | { content?: Array<{ text?: string }>; is_error?: boolean }
      | undefined;
    const text = result?.content?.map((c) => c.text).join("") ?? JSON.stringify(first);
    expect(result?.is_error, text).toBe(false);
    expect(text).toContain("/workspace/inbwrap\nfeature\n");
    expect(text).toContain(`${repoShas["feature commit"]}:feature commit`);
    expect(text).toContain("feature notes");
    expect(text).toContain("main branch");
    expect(text).toContain("mounted beside the repository");
    expect(text).toMatch(/ENVIRON\n[\s\S]*PATH=[\s\S]*ENV\n[\s\S]*PATH=/);

    // The sandbox's uid owns the workspace; while its command sleeps, every process of that uid on
    // the host (bwrap, its init, the supervisor, bash, sleep) has its environment read from /proc.
    const workspace = join(testServer.dataDir, "workspaces", session.id);
    const sandboxUid = lstatSync(workspace).uid;
    expect(sandboxUid).toBeGreaterThan(0);
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
    await waitForHistory(client, session.id, (h) => endedTurns(h) >= 2, 30_000);

    // The server was sent the token; nothing else holds it, in any of its forms.
    const basic = Buffer.from(`x-access-token:${BWRAP_TOKEN}`).toString("base64");
    expect(git.authorizations).toContain(`Basic ${basic}`);
    const committed = [];
    for await (const event of client.beta.sessions.events.list(session.id)) committed.push(event);
    const clone = join(workspace, "inbwrap");
    // The walk reaches the clone, its .git and the mount area (so an empty answer below means something).
    expect(filesHolding(testServer.dataDir, "feature notes")).toContain(join(clone, "FEATURE.md"));
    expect(filesHolding(join(testServer.dataDir, "mounts", session.id), "mounted beside")).toHaveLength(1);
    for (const file of ["config", "HEAD", "logs/HEAD", "packed-refs"])
      expect(existsSync(join(clone, ".git", file)), file).toBe(true);
    for (const needle of [BWRAP_TOKEN, basic]) {
      expect(text).not.toContain(needle);
      for (const process of running) expect(process.environ, process.cmdline).not.toContain(needle);
      expect(JSON.stringify(committed)).not.toContain(needle);
      // The workspace (.git's config, packed-refs, FETCH_HEAD, logs), the mounts, the database.
      expect(filesHolding(clone, needle)).toEqual([]);
      expect(filesHolding(testServer.dataDir, needle)).toEqual([]);
      expect(logLines.join("")).not.toContain(needle);
      expect(git.log.join("\n")).not.toContain(needle);
    }
    expect(logLines.length).toBeGreaterThan(0);
  }, 90_000);

  it("a wrong token fails the run with a clear clone error, without the token", async () => {
    const wrong = `ghp_wrong_${Math.random().toString(36).slice(2)}`;
    const agent = await client.beta.agents.create({ name: "repo-wrong", model: MODEL } as never);
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      resources: [
        { type: "github_repository", url: `${git.url}/inproc-wrong.git`, authorization_token: wrong },
      ],
    });
    const events = await turn(session.id, "hello");
    const error = events.find((e) => e.type === "session.error") as
      | { error?: { message?: string } }
      | undefined;
    expect(error?.error?.message).toMatch(/inproc-wrong\.git.*could not be cloned.*authentication failed/s);
    expect(JSON.stringify(events)).not.toContain(wrong);
    expect(filesHolding(testServer.dataDir, wrong)).toEqual([]);
  }, 40_000);
});
