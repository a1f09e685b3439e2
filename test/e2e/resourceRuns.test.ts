/**
 * Resources inside runs, through the official SDK with a scripted model on the real Anthropic
 * wire: an uploaded file read at its mount path in the real bwrap tier (read-only), a skill loaded
 * both ways (mounted, with the catalog in the system prompt the model receives; as `load_skill`
 * where there is no mount namespace), and a read-write memory store mounted as a directory whose
 * changes are written back as new versions, a conflicting change reported and never overwriting;
 * without a mount namespace, the same store through the memory tools.
 *
 * The bwrap cases need bubblewrap on the host, as every bwrap test does.
 */
import { join } from "node:path";
import { toFile } from "@anthropic-ai/sdk";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  BAD_REQUEST,
  history,
  isEndTurnIdle,
  MODEL,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    allowWeakerTiers: true,
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "ok" });
});

const TOOLS = [
  { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
];

async function environment(tier: "bwrap" | "none") {
  return t.client.beta.environments.create({
    name: `res-${tier}`,
    config: { type: "cloud", sandbox: { tier, provisioning: "eager" } } as never,
  });
}

async function turn(sessionId: string): Promise<WireEvent[]> {
  const idles = (h: WireEvent[]) => h.filter((e) => e.type === "session.status_idle").length;
  const before = idles(await history(t.client, sessionId));
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage("go")] });
  const events = await waitForHistory(t.client, sessionId, (h) => idles(h) > before, 30_000);
  const error = events.find((e) => e.type === "session.error");
  if (error) throw new Error(`the run failed: ${JSON.stringify(error)}`);
  return events;
}

/** The tool results of the last turn (after its user message). */
const resultTexts = (events: WireEvent[]) =>
  events
    .slice(events.map((e) => e.type).lastIndexOf("user.message"))
    .filter((e) => e.type === "agent.tool_result")
    .map((e) => {
      const content = (e as { content?: Array<{ text?: string }> }).content ?? [];
      return {
        text: content.map((c) => c.text ?? "").join(""),
        isError: (e as { is_error?: boolean }).is_error,
      };
    });

function internalFacts(sessionId: string, type: string): Array<Record<string, unknown>> {
  const db = new Database(join(t.dataDir, "awaken.db"), { readonly: true });
  try {
    return (
      db
        .prepare("select body_json from events where session_id = ? and type = ? order by seq")
        .all(sessionId, type) as Array<{ body_json: string }>
    ).map((r) => JSON.parse(r.body_json) as Record<string, unknown>);
  } finally {
    db.close();
  }
}

async function skill(name: string, body: string) {
  return t.client.beta.skills.create({
    files: [
      await toFile(
        Buffer.from(`---\nname: ${name}\ndescription: Handles ${name} tasks.\n---\n${body}\n`),
        `${name}/SKILL.md`,
        { type: "text/markdown" },
      ),
      await toFile(Buffer.from("helper text\n"), `${name}/docs/helper.md`, { type: "text/markdown" }),
    ],
  } as never);
}

describe("resources inside runs", () => {
  it("an uploaded file is read at its mount path in the bwrap sandbox, and cannot be written", async () => {
    const file = await t.client.beta.files.upload({
      file: await toFile(Buffer.from("quarterly numbers: 42\n"), "numbers.txt", { type: "text/plain" }),
    });
    const agent = await t.client.beta.agents.create({ name: "reader", model: MODEL, tools: TOOLS } as never);
    const env = await environment("bwrap");
    const s = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      resources: [{ type: "file", file_id: file.id, mount_path: "/mnt/data/numbers.txt" }],
    });
    fake.enqueue({
      kind: "tool_use",
      name: "read",
      input: { file_path: "/mnt/data/numbers.txt" },
      more: [
        { name: "bash", input: { command: "cat /mnt/data/numbers.txt; echo x >> /mnt/data/numbers.txt" } },
      ],
    });
    const results = resultTexts(await turn(s.id));
    expect(results[0]?.text).toContain("quarterly numbers: 42");
    expect(results[1]?.text).toContain("quarterly numbers: 42");
    expect(results[1]?.text).toMatch(/Read-only file system|Permission denied/);
    const realized = internalFacts(s.id, "awaken.resources_realized");
    expect(realized[0]).toMatchObject({
      mode: "mounted",
      resources: [{ type: "file", file_id: file.id, mount_path: "/mnt/data/numbers.txt" }],
    });
  }, 60_000);

  it("a skill is mounted read-only, listed in the system prompt, and its SKILL.md read with file tools", async () => {
    const created = await skill("report-writer", "MOUNTED SKILL BODY");
    const agent = await t.client.beta.agents.create({
      name: "skilled",
      model: MODEL,
      tools: TOOLS,
      skills: [{ type: "custom", skill_id: created.id }],
    } as never);
    const env = await environment("bwrap");
    const s = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const seen = fake.requests.length;
    fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: {
        command:
          "cat /mnt/skills/report-writer/SKILL.md /mnt/skills/report-writer/docs/helper.md; touch /mnt/skills/report-writer/x",
      },
    });
    const results = resultTexts(await turn(s.id));
    expect(results[0]?.text).toContain("MOUNTED SKILL BODY");
    expect(results[0]?.text).toContain("helper text");
    expect(results[0]?.text).toMatch(/Read-only file system|Permission denied/);
    const system = JSON.stringify(fake.requests[seen]?.body.system);
    expect(system).toContain("report-writer");
    expect(system).toContain("/mnt/skills/report-writer/SKILL.md");
    expect(system).toContain("Handles report-writer tasks.");
    const realized = internalFacts(s.id, "awaken.resources_realized");
    expect(realized[0]).toMatchObject({
      mode: "mounted",
      skills: [{ skill_id: created.id, version: expect.stringMatching(/./) }],
    });
  }, 60_000);

  it("without a mount namespace (the none tier) a skill is served by load_skill, not mounted", async () => {
    const created = await skill("csv-cleaner", "TOOL SKILL BODY");
    const agent = await t.client.beta.agents.create({
      name: "skilled-none",
      model: MODEL,
      tools: TOOLS,
      skills: [{ type: "custom", skill_id: created.id }],
    } as never);
    const env = await environment("none");
    const s = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const seen = fake.requests.length;
    fake.enqueue({
      kind: "tool_use",
      name: "load_skill",
      input: { name: "csv-cleaner" },
      more: [
        { name: "load_skill", input: { name: "csv-cleaner", path: "docs/helper.md" } },
        { name: "load_skill", input: { name: "csv-cleaner", path: "../../etc/passwd" } },
      ],
    });
    const results = resultTexts(await turn(s.id));
    expect(results[0], JSON.stringify(results)).toMatchObject({ isError: false });
    expect(results[0]?.text).toContain("TOOL SKILL BODY");
    expect(results[1]?.text).toContain("helper text");
    expect(results[2]).toMatchObject({ isError: true });
    const request = fake.requests[seen]?.body as { system?: unknown; tools?: Array<{ name: string }> };
    expect(request.tools?.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["load_skill", "list_skills"]),
    );
    expect(JSON.stringify(request.system)).toContain('load_skill with name \\"csv-cleaner\\"');
  }, 60_000);

  it("a file resource on the none tier is refused at admission, naming why", async () => {
    const file = await t.client.beta.files.upload({ file: await toFile(Buffer.from("x"), "x.txt") });
    const agent = await t.client.beta.agents.create({
      name: "none-files",
      model: MODEL,
      tools: TOOLS,
    } as never);
    const env = await environment("none");
    await expect(
      t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: env.id,
        resources: [{ type: "file", file_id: file.id }],
      }),
    ).rejects.toMatchObject({
      status: BAD_REQUEST.status,
      message: expect.stringMatching(/mount namespace/),
    });
  });

  it("a read-write memory store is a directory; changes are written back as versions, a conflict never overwrites", async () => {
    const store = await t.client.beta.memoryStores.create({ name: "prefs" });
    const memories = t.client.beta.memoryStores.memories;
    const existing = await memories.create(store.id, { path: "/notes/a.md", content: "first" });
    const agent = await t.client.beta.agents.create({
      name: "remembers",
      model: MODEL,
      tools: TOOLS,
    } as never);
    const env = await environment("bwrap");
    const s = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      resources: [{ type: "memory_store", memory_store_id: store.id }],
    });
    fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: { command: "cat /mnt/memory/prefs/notes/a.md; echo -n second > /mnt/memory/prefs/notes/b.md" },
    });
    const results = resultTexts(await turn(s.id));
    expect(results[0]?.text).toContain("first");
    const versions = [];
    for await (const v of t.client.beta.memoryStores.memoryVersions.list(store.id)) versions.push(v);
    expect(versions).toHaveLength(2);
    const listed = [];
    for await (const m of memories.list(store.id)) listed.push(m as { path?: string });
    expect(listed.map((m) => m.path).sort()).toEqual(["/notes/a.md", "/notes/b.md"]);
    const written = internalFacts(s.id, "awaken.memory_written_back");
    expect(written[0]).toMatchObject({ outcomes: [{ path: "notes/b.md", outcome: "written" }] });

    // Someone changes a.md while the agent's command runs: the agent's change is a conflict.
    fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: { command: "sleep 2; echo -n agent > /mnt/memory/prefs/notes/a.md" },
    });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    await waitForHistory(
      t.client,
      s.id,
      (h) => h.some((e) => e.type === "agent.tool_use" && JSON.stringify(e).includes("sleep 2")),
      20_000,
    );
    await memories.update(existing.id, { memory_store_id: store.id, content: "api" } as never);
    const after = await waitForHistory(t.client, s.id, (h) => h.filter(isEndTurnIdle).length >= 2, 30_000);
    const last = resultTexts(after).at(-1);
    expect(last?.text).toMatch(/\[memory\].*notes\/a\.md was not saved/);
    const current = await memories.retrieve(existing.id, { memory_store_id: store.id } as never);
    expect((current as { content?: string }).content).toBe("api");
    // The agent now sees the current content.
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "cat /mnt/memory/prefs/notes/a.md" } });
    expect(resultTexts(await turn(s.id)).at(-1)?.text).toContain("api");
  }, 90_000);

  it("without a mount namespace a memory store is served by the memory tools, under the same precondition", async () => {
    const store = await t.client.beta.memoryStores.create({ name: "tool-notes" });
    const memories = t.client.beta.memoryStores.memories;
    const existing = await memories.create(store.id, { path: "/a.md", content: "first" });
    const agent = await t.client.beta.agents.create({
      name: "tool-memory",
      model: MODEL,
      tools: TOOLS,
    } as never);
    const env = await environment("none");
    const s = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      resources: [{ type: "memory_store", memory_store_id: store.id }],
    });
    fake.enqueue({
      kind: "tool_use",
      name: "memory_write",
      input: { path: "a.md", content: "blind" },
      more: [
        { name: "memory_read", input: { path: "a.md" } },
        { name: "memory_write", input: { path: "b.md", content: "new" } },
        { name: "memory_list", input: {} },
      ],
    });
    const results = resultTexts(await turn(s.id));
    // A write over a memory the agent has not read is refused: it would overwrite unseen content.
    expect(results.map((r) => r.isError)).toEqual([true, false, false, false]);
    expect(results[0]?.text).toContain("read it with memory_read first");
    expect(results[1]?.text).toMatch(/^\[a\.md content_sha256 [0-9a-f]{64}\]\nfirst$/);
    const sha = /content_sha256 ([0-9a-f]{64})/.exec(results[1]?.text ?? "")?.[1];
    expect(results[3]?.text).toContain("b.md");

    // Changed by someone else after the agent read it: the agent's write is a conflict.
    await memories.update(existing.id, { memory_store_id: store.id, content: "api" } as never);
    fake.enqueue({
      kind: "tool_use",
      name: "memory_write",
      input: { path: "a.md", content: "agent", expected_sha256: sha },
    });
    const conflict = resultTexts(await turn(s.id));
    expect(conflict[0]).toMatchObject({ isError: true });
    expect(conflict[0]?.text).toContain("changed since you read it");
    const current = await memories.retrieve(existing.id, { memory_store_id: store.id } as never);
    expect((current as { content?: string }).content).toBe("api");
    const versions = [];
    for await (const v of t.client.beta.memoryStores.memoryVersions.list(store.id)) versions.push(v);
    // a.md created and modified through the API, b.md created by the agent: nothing else.
    expect(versions).toHaveLength(3);
    expect(internalFacts(s.id, "awaken.resources_realized")[0]).toMatchObject({
      mode: "tools",
      resources: [{ type: "memory_store", memory_store_id: store.id, access: "read_write" }],
    });
  }, 60_000);
});
