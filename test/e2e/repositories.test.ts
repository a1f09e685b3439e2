/**
 * Repository resources through the SDK, on the all-in-one server's own workers: a private
 * repository served by git's smart HTTP backend on the loopback (allow-listed by the operator, as
 * a private host must be) is cloned into the session's workspace at the commit asked for, before
 * the agent's first tool call; the agent's `git log` and `cat` see it. The token reaches the git
 * server and nothing else: not the workspace (`.git` included), the data dir (database, blobs,
 * mounts), any committed event, the sandbox's processes' environment. A wrong token fails the run
 * with a clear clone error that does not carry it.
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHttpServer, startGitHttpServer } from "../support/gitHttpServer.js";
import { MODEL, stopReason, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";

const REPO_TOKEN = `ghp_inproc_${Math.random().toString(36).slice(2)}${Date.now()}`;

const ended = (events: WireEvent[]) =>
  events.some((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");

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

describe("github_repository resources on the server's own workers", () => {
  let testServer: TestServer;
  let client: Anthropic;
  let git: GitHttpServer;
  let environmentId: string;
  let shas: Record<string, string>;

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
    testServer = await startTestServer({ allowWeakerTiers: true, allowPrivateHosts: LOOPBACK });
    client = testServer.client;
    const environment = await client.beta.environments.create({
      name: "repositories",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    environmentId = environment.id;
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
