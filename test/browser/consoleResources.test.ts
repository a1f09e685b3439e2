/**
 * The Console's Files, Skills and Memory stores pages and a session's resources, in headless
 * chromium against the built `awaken up`: each thing is made through the SDK, then read on its page
 * as an operator sees it. Names, paths and SKILL.md are hostile markup: they must show as their
 * literal text and run nothing (no alert, no console error, no element made from them).
 */
import { mkdirSync, readFileSync } from "node:fs";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleServer, startConsoleServer } from "../support/consoleServer.js";
import { isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { closeConsoleTab, injectedElements, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";
const HOSTILE_NAME = `<img src=x onerror=alert(1)>.txt`;
const HOSTILE_PATH = "/notes/<img src=x onerror=alert(2)> bold.md";
const HOSTILE_SKILL_MD = "# Hostile\n\n<script>alert(3)</script>\n<img src=x onerror=alert(4)>\n";

let server: ConsoleServer;
let browser: Browser;
beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startConsoleServer();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });
const text = (page: Page, testId: string) => page.getByTestId(testId).textContent();

async function upload(name: string, content: string, type = "text/plain") {
  return server.client.beta.files.upload({ file: await toFile(Buffer.from(content), name, { type }) });
}

async function skillBundle(description: string, body: string) {
  return [
    await toFile(
      Buffer.from(`---\nname: hostile-skill\ndescription: ${JSON.stringify(description)}\n---\n${body}`),
      "hostile-skill/SKILL.md",
    ),
    await toFile(Buffer.from("#!/bin/sh\necho hi\n"), "hostile-skill/scripts/run.sh"),
  ];
}

describe("the Console's resource pages", { timeout: 90_000 }, () => {
  it("lists files (name, MIME, size, time) as text, downloads one through the SDK, deletes one only once confirmed", async () => {
    const hostile = await upload(HOSTILE_NAME, "hostile bytes <script>alert(5)</script>", "text/html");
    const plain = await upload("report.csv", "a,b\n1,2\n", "text/csv");
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.getByRole("link", { name: "Files" }).click();
    const hostileRow = page.locator(`[data-testid="file-row"][data-file-id="${hostile.id}"]`);
    await hostileRow.waitFor();
    expect(await hostileRow.locator(".file-name").textContent()).toBe(HOSTILE_NAME);
    const plainRow = page.locator(`[data-testid="file-row"][data-file-id="${plain.id}"]`);
    expect(await plainRow.textContent()).toContain("report.csv");
    expect(await plainRow.textContent()).toContain(plain.mime_type);
    expect(await plainRow.textContent()).toContain(`${plain.size_bytes} B`);
    expect(await injectedElements(page)).toBe(0);

    // The download is fetched with the key in a header and saved: the browser never renders it.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      hostileRow.getByRole("button", { name: "Download" }).click(),
    ]);
    expect(readFileSync(await download.path()).toString()).toBe("hostile bytes <script>alert(5)</script>");

    // Declined: nothing is deleted. Confirmed: the row goes and the SDK no longer finds it.
    tab.answerConfirms = false;
    await plainRow.getByRole("button", { name: "Delete" }).click();
    await poll(() => tab.dialogs.length).toBe(1);
    expect(tab.dialogs[0]).toContain("report.csv");
    expect((await server.client.beta.files.retrieveMetadata(plain.id)).id).toBe(plain.id);
    tab.answerConfirms = true;
    await plainRow.getByRole("button", { name: "Delete" }).click();
    await plainRow.waitFor({ state: "detached" });
    await expect(server.client.beta.files.retrieveMetadata(plain.id)).rejects.toBeInstanceOf(
      Anthropic.NotFoundError,
    );
    await closeConsoleTab(tab, `${SHOTS}/files.png`);
  });

  it("pages the files list with the wire's cursors", async () => {
    // The page shows 50: make sure there are more than that.
    for (let index = 0; index < 51; index++) await upload(`paged-${index}.txt`, `file ${index}`);
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.goto(`${server.url}/console/files`);
    const rows = page.locator('[data-testid="file-row"]');
    await poll(() => rows.count()).toBe(50);
    const first = await rows.first().getAttribute("data-file-id");
    await page.getByRole("button", { name: "Next page" }).click();
    await poll(async () => rows.first().getAttribute("data-file-id")).not.toBe(first);
    const second = await rows.evaluateAll((all) => all.map((row) => row.getAttribute("data-file-id")));
    expect(second).not.toContain(first);
    await page.getByRole("button", { name: "Previous page" }).click();
    await poll(async () => rows.first().getAttribute("data-file-id")).toBe(first);
    await closeConsoleTab(tab);
  });

  it("shows a skill's versions, and a version's files and SKILL.md as plain text", async () => {
    const skill = await server.client.beta.skills.create({
      display_name: "<img src=x onerror=alert(6)> skill",
      files: await skillBundle("first <i>version</i>", "version one"),
    });
    const second = await server.client.beta.skills.versions.create(skill.id, {
      files: await skillBundle("<img src=x onerror=alert(7)>", HOSTILE_SKILL_MD),
    });
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.getByRole("link", { name: "Skills" }).click();
    const row = page.locator(`[data-testid="skill-row"][data-skill-id="${skill.id}"]`);
    await row.getByRole("link", { name: "<img src=x onerror=alert(6)> skill" }).click();
    await page.getByTestId("skill-md").waitFor();
    // The latest version is shown first: its SKILL.md, whole, as text.
    expect(await page.getByTestId("skill-bundle").locator("h2").textContent()).toContain(second.id);
    expect(await text(page, "skill-md")).toContain(HOSTILE_SKILL_MD.trim());
    expect(await text(page, "skill-files")).toContain("hostile-skill/scripts/run.sh");
    expect(await text(page, "skill-versions")).toContain("<img src=x onerror=alert(7)>");
    expect(await page.getByTestId("skill-versions").locator("tbody tr").count()).toBe(2);
    expect(await injectedElements(page)).toBe(0);

    // The older version, by its link.
    const versions = await server.client.beta.skills.versions.list(skill.id);
    const first = versions.data.find((version) => version.id !== second.id)!;
    await page.getByRole("link", { name: first.id }).click();
    await poll(() => text(page, "skill-md")).toContain("version one");
    expect(page.url()).toBe(`${server.url}/console/skills/${skill.id}/versions/${first.id}`);
    await closeConsoleTab(tab, `${SHOTS}/skill.png`);
  });

  it("walks a memory store a level at a time, shows a memory and its versions, and redacts one once confirmed", async () => {
    const store = await server.client.beta.memoryStores.create({
      name: "<img src=x onerror=alert(8)> store",
      description: "notes for the console test",
    });
    await server.client.beta.memoryStores.memories.create(store.id, { path: "/top.md", content: "top" });
    const memory = await server.client.beta.memoryStores.memories.create(store.id, {
      path: HOSTILE_PATH,
      content: "<script>alert(9)</script> first",
    });
    const updated = await server.client.beta.memoryStores.memories.update(memory.id, {
      memory_store_id: store.id,
      content: "<script>alert(9)</script> second",
    });
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.getByRole("link", { name: "Memory" }).click();
    await page.getByRole("link", { name: "<img src=x onerror=alert(8)> store" }).click();
    const tree = page.getByTestId("memory-tree");
    await tree.waitFor();
    // The root lists its direct children: the file and the folder, not the folder's contents.
    await poll(() => tree.textContent()).toContain("top.md");
    expect(await tree.textContent()).toContain("notes/");
    expect(await tree.textContent()).not.toContain("bold");
    await tree.getByRole("button", { name: "notes/" }).click();
    const name = HOSTILE_PATH.slice("/notes/".length);
    await tree.getByRole("link", { name }).click();
    await page.getByTestId("memory-content").waitFor();
    expect(await text(page, "memory-content")).toBe("<script>alert(9)</script> second");
    expect(await page.locator("#memory-title").textContent()).toBe(HOSTILE_PATH);

    const versionRows = page.locator('[data-testid="memory-version"]');
    await poll(() => versionRows.count()).toBe(2);
    const older = page.locator(
      `[data-testid="memory-version"]:not([data-version-id="${updated.memory_version_id}"])`,
    );
    expect(await older.textContent()).toContain("created");
    expect(await older.textContent()).toMatch(/API key \S+/);
    const olderId = (await older.getAttribute("data-version-id"))!;
    expect(await injectedElements(page)).toBe(0);

    tab.answerConfirms = false;
    await older.getByRole("button", { name: "Redact" }).click();
    await poll(() => tab.dialogs.length).toBe(1);
    expect(tab.dialogs[0]).toContain(olderId);
    const kept = await server.client.beta.memoryStores.memoryVersions.retrieve(olderId, {
      memory_store_id: store.id,
    });
    expect(kept.redacted_at ?? null).toBeNull();

    tab.answerConfirms = true;
    await older.getByRole("button", { name: "Redact" }).click();
    await poll(() => older.getAttribute("data-redacted")).toBe("true");
    expect(await older.textContent()).toContain("Redacted");
    expect(await older.textContent()).not.toContain("first");
    const redacted = await server.client.beta.memoryStores.memoryVersions.retrieve(olderId, {
      memory_store_id: store.id,
    });
    expect(redacted.redacted_at).toEqual(expect.any(String));
    expect(redacted.content ?? null).toBeNull();
    expect(redacted.path ?? null).toBeNull();
    // The memory itself keeps its current content: only the old version was erased.
    expect(await text(page, "memory-content")).toBe("<script>alert(9)</script> second");

    // Opened at the memory's own address, the tree starts in its folder.
    expect(page.url()).toBe(`${server.url}/console/memory-stores/${store.id}/memories/${memory.id}`);
    await page.reload();
    await tree.getByRole("link", { name }).waitFor();
    expect(await page.getByRole("navigation", { name: "Memory path" }).textContent()).toBe("/notes/");
    await closeConsoleTab(tab, `${SHOTS}/memory-store.png`);
  });

  it("shows what a session's runs see: files, memory stores with their access, repositories without a token, pinned skill versions", async () => {
    const file = await upload("input.txt", "input");
    const store = await server.client.beta.memoryStores.create({ name: "session notes" });
    const skill = await server.client.beta.skills.create({
      files: await skillBundle("pinned", "pinned body"),
    });
    const agent = await server.client.beta.agents.create({
      name: "resources",
      model: MODEL,
      skills: [{ type: "custom", skill_id: skill.id }],
    });
    // A session that mounts files or repositories needs its sandbox before the first tool call. No
    // run starts here (no message is sent), so nothing is realized or cloned.
    const environment = await server.client.beta.environments.create({
      name: "resources-env",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    const token = "ghp_consoleResourcesTestTokenNeverShown";
    const session = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      resources: [
        { type: "file", file_id: file.id },
        { type: "memory_store", memory_store_id: store.id, access: "read_only" },
        { type: "github_repository", url: "https://github.com/example/repo", authorization_token: token },
      ],
    });
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.goto(`${server.url}/console/sessions/${session.id}`);
    const resources = page.getByTestId("session-resource");
    await poll(() => resources.count()).toBe(3);
    const shown = await text(page, "session-resources");
    expect(shown).toContain(file.id);
    expect(shown).toContain("session notes");
    expect(shown).toContain("read_only");
    expect(shown).toContain("https://github.com/example/repo");
    expect(await page.content()).not.toContain(token);
    // The skill version the agent pinned at publication: what every run of the session mounts.
    const pinned = page.getByTestId("session-skill");
    expect(await pinned.textContent()).toContain(`version ${skill.latest_version_id}`);
    await pinned.getByRole("link", { name: skill.id }).click();
    await poll(() => page.getByTestId("skill-md").textContent()).toContain("pinned body");
    expect(page.url()).toBe(`${server.url}/console/skills/${skill.id}/versions/${skill.latest_version_id}`);
    await page.goBack();
    await page.getByTestId("session-resources").getByRole("link", { name: "session notes" }).click();
    await page.getByRole("heading", { name: /session notes/ }).waitFor();
    await closeConsoleTab(tab, `${SHOTS}/session-resources.png`);
  });

  it("shows what each run used: the file's digest and mount path, the exact skill version, each memory write-back's outcome and reason", async () => {
    const file = await upload("numbers.txt", "quarterly numbers: 42\n");
    const store = await server.client.beta.memoryStores.create({ name: "runnotes" });
    const memories = server.client.beta.memoryStores.memories;
    const existing = await memories.create(store.id, { path: "/notes/a.md", content: "first" });
    const skill = await server.client.beta.skills.create({ files: await skillBundle("used", "used body") });
    const agent = await server.client.beta.agents.create({
      name: "run-usage",
      model: MODEL,
      skills: [{ type: "custom", skill_id: skill.id }],
      tools: [
        { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
      ],
    } as never);
    const environment = await server.client.beta.environments.create({
      name: "run-usage-env",
      config: { type: "cloud", sandbox: { tier: "bwrap", provisioning: "eager" } } as never,
    });
    const session = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      resources: [
        { type: "file", file_id: file.id, mount_path: "/mnt/data/numbers.txt" },
        { type: "memory_store", memory_store_id: store.id },
      ],
    });
    // b.md is new (written); a.md is changed through the API while the command runs (a conflict).
    server.fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: {
        command:
          "echo -n mine > '/mnt/memory/runnotes/notes/b.md'; sleep 2; echo -n agent > '/mnt/memory/runnotes/notes/a.md'",
      },
    });
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
    await waitForHistory(
      server.client,
      session.id,
      (h) => h.some((e) => e.type === "agent.tool_use" && JSON.stringify(e).includes("sleep 2")),
      20_000,
    );
    await memories.update(existing.id, { memory_store_id: store.id, content: "api" } as never);
    await waitForHistory(server.client, session.id, (h) => h.some(isEndTurnIdle), 30_000);

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.goto(`${server.url}/console/sessions/${session.id}`);
    const runs = page.getByTestId("run-usage");
    await poll(() => runs.count()).toBe(1);
    const run = await runs.first().textContent();
    expect(run).toMatch(/run_\w+/);
    expect(run).toContain(file.id);
    expect(run).toContain("/mnt/data/numbers.txt");
    expect(run).toMatch(/sha256:[0-9a-f]{64}/);
    expect(run).toContain(store.id);
    expect(run).toContain("read_write");
    expect(await runs.first().getByTestId("run-usage-skill").textContent()).toContain(
      `version ${skill.latest_version_id}`,
    );
    const written = runs.first().locator('[data-testid="run-usage-write-back"][data-outcome="written"]');
    expect(await written.textContent()).toContain("notes/b.md");
    const conflict = runs.first().locator('[data-testid="run-usage-write-back"][data-outcome="conflict"]');
    expect(await conflict.textContent()).toContain("notes/a.md");
    expect((await conflict.locator(".muted").last().textContent())?.length).toBeGreaterThan(0);
    expect(await injectedElements(page)).toBe(0);
    await closeConsoleTab(tab, `${SHOTS}/session-run-usage.png`);
  });
});
