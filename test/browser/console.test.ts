/**
 * The Console in headless chromium against the built `awaken up` (a child process) with a scripted
 * model: sign in, the sessions list (live from the hint stream), a run streaming, approvals answered from the list, inline and
 * elsewhere, a failure's committed prefix, an interrupt, a credential's revisions and custody
 * audit, environment keys and workers. Each page is screenshotted into
 * test-results/console/, and no test may leave an error in the browser's console.
 */
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/console/api/wire.js";
import { transcriptRows } from "../../src/console/projection/transcript.js";
import { CONSOLE_API_KEY, type ConsoleServer, startConsoleServer } from "../support/consoleServer.js";
import { history, MODEL, userMessage } from "../support/sdkHelpers.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";

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

interface Tab {
  page: Page;
  /** Console errors and uncaught exceptions, as the operator's devtools would show them. */
  problems: string[];
  context: BrowserContext;
}

async function openConsole(viewport = { width: 1200, height: 900 }): Promise<Tab> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(String(error)));
  await page.goto(`${server.url}/console/sessions`);
  return { page, problems, context };
}

async function signIn(tab: Tab): Promise<void> {
  await tab.page.getByLabel("API key").fill(CONSOLE_API_KEY);
  await tab.page.getByRole("button", { name: "Sign in" }).click();
  await tab.page.getByRole("heading", { name: "Sessions" }).waitFor();
}

async function close(tab: Tab, shot?: string): Promise<void> {
  if (shot) await tab.page.screenshot({ path: `${SHOTS}/${shot}.png`, fullPage: true });
  await tab.context.close();
  expect(tab.problems).toEqual([]);
}

async function agentAndEnvironment(name: string, permission?: "always_ask" | "always_allow") {
  const agent = await server.client.beta.agents.create({
    name,
    model: MODEL,
    ...(permission
      ? {
          tools: [
            {
              type: "agent_toolset_20260401",
              configs: [{ name: "bash", permission_policy: { type: permission } }],
            },
          ] as never,
        }
      : {}),
  });
  const environment = await server.client.beta.environments.create({
    name: `${name}-env`,
    ...(permission ? { config: { type: "cloud", sandbox: { tier: "none" } } as never } : {}),
  });
  return { agent, environment };
}

async function newSession(name: string, permission?: "always_ask" | "always_allow") {
  const { agent, environment } = await agentAndEnvironment(name, permission);
  return server.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, title: name });
}

/** Waits until the session's last idle says why it stopped (the run has settled). */
async function settled(sessionId: string, stop: string): Promise<void> {
  await poll(
    async () => {
      const events = await history(server.client, sessionId);
      const idle = events.filter((e) => e.type === "session.status_idle").at(-1);
      return (idle?.stop_reason as { type: string } | undefined)?.type;
    },
    { timeout: 15_000 },
  ).toBe(stop);
}

async function openSession(tab: Tab, sessionId: string): Promise<void> {
  await tab.page.goto(`${server.url}/console/sessions/${sessionId}`);
  await tab.page.getByTestId("run-state").waitFor();
}

/** expect.poll with room for a loaded machine: the page re-reads some lists only every few seconds. */
const poll = <T>(read: () => Promise<T> | T, options: { timeout: number } = { timeout: 15_000 }) =>
  expect.poll(read, options);

const row = (page: Page, kind: string) => page.locator(`[data-testid="transcript-row"][data-kind="${kind}"]`);

describe("the Console", { timeout: 60_000 }, () => {
  it("is served with a strict CSP, immutable hashed assets and index.html for client routes", async () => {
    const index = await fetch(`${server.url}/console/sessions/sesn_x`);
    expect(index.status).toBe(200);
    expect(index.headers.get("cache-control")).toBe("no-cache");
    const csp = index.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await index.text();
    expect(html).toContain('<base href="../" />');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${server.url}/console/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await fetch(`${server.url}/console/assets/../../etc/passwd`)).status).toBe(404);
    expect((await fetch(`${server.url}/console/assets/missing.js`)).status).toBe(404);
    const bare = await fetch(`${server.url}/console`, { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe("console/");
  });

  it("signs in with an API key (refusing a wrong one), keeps it for the tab only, and signs out", async () => {
    const session = await newSession("sign-in");
    const tab = await openConsole();
    const { page } = tab;
    await page.screenshot({ path: `${SHOTS}/sign-in.png` });
    await page.getByLabel("API key").fill("not-the-key");
    await page.keyboard.press("Enter");
    await poll(() => page.getByRole("alert").textContent()).toContain("Invalid API key");
    // The browser reports the refused request itself; that line is the 401, nothing else.
    expect(tab.problems).toHaveLength(1);
    expect(tab.problems[0]).toContain("401");
    tab.problems.length = 0;

    await signIn(tab);
    expect(await page.evaluate("window.sessionStorage.length")).toBe(1);
    expect(await page.evaluate("window.localStorage.length")).toBe(0);
    const listed = page.locator(`[data-testid="session-row"][data-session-id="${session.id}"]`);
    await listed.waitFor();
    expect(await listed.textContent()).toContain("sign-in");
    await page.reload();
    await listed.waitFor();
    await page.screenshot({ path: `${SHOTS}/sessions.png`, fullPage: true });

    // By keyboard alone: the first stops are the navigation's links, in order, and Enter follows one.
    await page.locator("body").focus();
    const focused = () => page.evaluate<string>("document.activeElement?.textContent ?? ''");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("Overview");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("Sessions");
    await page.keyboard.press("Tab");
    expect(await focused()).toMatch(/^Approvals/);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Approvals" }).waitFor();
    expect(page.url()).toBe(`${server.url}/console/approvals`);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate("window.sessionStorage.length")).toBe(0);
    await close(tab);
  });

  it("filters the sessions by agent and status, and opens one by its id", async () => {
    const { agent, environment } = await agentAndEnvironment("filtered");
    const idle = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
    });
    const archived = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
    });
    await server.client.beta.sessions.archive(archived.id);
    const other = await newSession("unfiltered");
    const tab = await openConsole();
    await signIn(tab);
    const { page } = tab;
    const ids = () =>
      page
        .locator('[data-testid="session-row"]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session-id")));
    await page.locator(`[data-session-id="${other.id}"]`).waitFor();
    await page.getByLabel("Agent").selectOption(agent.id);
    await poll(ids).toEqual([idle.id]);
    await page.getByLabel("Status").selectOption("terminated");
    await poll(ids).toEqual([]);
    await page.getByLabel("Status").selectOption("");
    // Paged newest first, 20 to a page: the Older page holds what the first could not.
    const newer: string[] = [];
    for (let i = 0; i < 20; i++)
      newer.push(
        (await server.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id })).id,
      );
    // The list follows the session hint stream: the new sessions arrive without a reload. A hint
    // may land while they are being created, so wait for the page that holds exactly all 20.
    await poll(async () => [...(await ids())].sort(), { timeout: 10_000 }).toEqual([...newer].sort());
    const firstPage = await ids();
    expect(firstPage).not.toContain(idle.id);
    await page.getByRole("button", { name: "Older" }).click();
    await poll(ids).toEqual([idle.id]);
    await page.getByRole("button", { name: "Newer" }).click();
    await poll(ids).toEqual(firstPage);
    await page.getByLabel("Session id").fill(archived.id);
    await page.getByRole("button", { name: "Open" }).click();
    await page.getByTestId("run-state").waitFor();
    expect(page.url()).toBe(`${server.url}/console/sessions/${archived.id}`);
    await poll(() => page.getByTestId("run-state").textContent()).toContain("terminated");
    await page.goBack();
    await page.getByLabel("Session id").fill("sesn_does_not_exist");
    await page.getByRole("button", { name: "Open" }).click();
    await page.getByRole("alert").waitFor();
    expect(tab.problems.every((line) => line.includes("404"))).toBe(true);
    tab.problems.length = 0;
    await close(tab);
  });

  it("the sessions list follows the server's hints: a session created and a run finished through the SDK appear without a reload, and idle it is not re-read", async () => {
    const { agent, environment } = await agentAndEnvironment("listed-live");
    const tab = await openConsole();
    const { page } = tab;
    const listReads: number[] = [];
    const streams: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      // The sessions page reads 20 at a time; the approvals behind the nav badge read idle ones 50 at a time.
      if (url.pathname.endsWith("/v1/sessions") && url.searchParams.get("limit") === "20")
        listReads.push(Date.now());
      if (url.pathname.includes("/v1/awaken/") && url.pathname.endsWith("/stream"))
        streams.push(url.pathname);
    });
    await signIn(tab);
    await poll(() => listReads.length).toBeGreaterThan(0);
    const session = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      title: "listed-live",
    });
    const listed = page.locator(`[data-session-id="${session.id}"]`);
    await listed.waitFor({ timeout: 10_000 });
    const status = () => listed.locator(".status").textContent();
    expect(await status()).toBe("idle");
    server.fake.enqueue({ kind: "text", text: "one two three four five six seven eight", chunkDelayMs: 300 });
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("take your time")] });
    await poll(status, { timeout: 10_000 }).toBe("running");
    await settled(session.id, "end_turn");
    await poll(status, { timeout: 10_000 }).toBe("idle");
    await page.screenshot({ path: `${SHOTS}/sessions-live.png`, fullPage: true });
    // Idle, the list is not re-read: it waits for a hint (the fallback poll is every 3 s; the
    // server's safety hint comes only after 15 s without one).
    const quietSince = async (ms: number) => {
      while (Date.now() - (listReads.at(-1) ?? 0) < ms) await page.waitForTimeout(100);
    };
    await quietSince(1_500);
    const readsBefore = listReads.length;
    await page.waitForTimeout(5_000);
    expect(listReads.length).toBe(readsBefore);
    // One hint stream for the tab, whatever the pages it shows.
    expect(streams).toEqual(["/v1/awaken/sessions/stream"]);
    await close(tab);
  });

  it("a long session keeps only the rows in view in the DOM", async () => {
    const session = await newSession("long");
    for (let turn = 0; turn < 15; turn++) {
      await server.client.beta.sessions.events.send(session.id, { events: [userMessage(`turn ${turn}`)] });
      await settled(session.id, "end_turn");
      const count = (await history(server.client, session.id)).filter(
        (e) => e.type === "user.message",
      ).length;
      expect(count).toBe(turn + 1);
    }
    const tab = await openConsole();
    await signIn(tab);
    await openSession(tab, session.id);
    const transcript = tab.page.getByTestId("transcript");
    // The page shows every committed event's row: the projection of the history the SDK reads.
    const rows = transcriptRows(
      (await history(server.client, session.id)) as unknown as SessionEvent[],
    ).length;
    expect(rows).toBeGreaterThanOrEqual(60);
    await poll(() => transcript.getAttribute("data-rows")).toBe(String(rows));
    const inDom = await tab.page.locator('[data-testid="transcript-row"]').count();
    expect(inDom).toBeGreaterThan(0);
    expect(inDom).toBeLessThan(rows / 2);
    // It follows the end: the last turn's answer is on screen.
    await tab.page.locator('[data-kind="message"][data-role="agent"]', { hasText: "turn 14" }).waitFor();
    await close(tab);
  });

  it("shows a run streaming as live previews, then the committed message and the model request", async () => {
    const session = await newSession("streaming");
    server.fake.enqueue({
      kind: "text",
      text: "one two three four five six seven eight nine ten",
      chunkDelayMs: 120,
      usage: { input_tokens: 11, output_tokens: 22 },
    });
    const tab = await openConsole();
    await signIn(tab);
    await openSession(tab, session.id);
    const { page } = tab;
    await page.getByLabel("Message").fill("please stream");
    await page.getByRole("button", { name: "Send" }).click();
    const preview = page.getByTestId("preview");
    await poll(() => preview.textContent(), { timeout: 10_000 }).toContain("two");
    expect(await page.getByTestId("run-state").getAttribute("data-phase")).toBe("running");
    await page.screenshot({ path: `${SHOTS}/streaming.png`, fullPage: true });
    const agentRow = page.locator('[data-kind="message"][data-role="agent"]');
    await poll(() => agentRow.textContent(), { timeout: 10_000 }).toContain("nine ten");
    expect(await preview.count()).toBe(0);
    await poll(() => page.getByTestId("run-state").getAttribute("data-phase")).toBe("ended");
    expect(await page.getByTestId("run-state").textContent()).toContain("Run 1 ended: end_turn");
    const model = row(page, "model");
    expect(await model.textContent()).toContain("anthropic / claude-sonnet-4-6");
    expect(await model.textContent()).toContain("11 in · 22 out");
    expect(await page.getByTestId("pins").textContent()).toContain(session.agent.id);
    // The environment by its name, with its id beside it.
    await poll(() => page.getByTestId("pins").textContent()).toContain("streaming-env");
    expect(await page.getByTestId("pins").textContent()).toContain(session.environment_id);
    await close(tab, "session");
  });

  it("lists a pending ask across sessions and Allow there runs the tool", async () => {
    const session = await newSession("approve-list", "always_ask");
    server.fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo approved-from-list" } },
      { kind: "text", text: "The command ran." },
    );
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("run it")] });
    await settled(session.id, "requires_action");
    const tab = await openConsole();
    await signIn(tab);
    const { page } = tab;
    const listed = page.locator(`[data-testid="session-row"][data-session-id="${session.id}"]`);
    await poll(() => listed.textContent()).toContain("awaiting approval");
    await page.getByRole("link", { name: /^Approvals/ }).click();
    const item = page.getByTestId("approval").filter({ hasText: "approve-list" });
    await item.waitFor({ timeout: 10_000 });
    expect(await item.textContent()).toContain("echo approved-from-list");
    await page.screenshot({ path: `${SHOTS}/approvals.png`, fullPage: true });
    await item.getByRole("button", { name: "Allow" }).click();
    await item.waitFor({ state: "detached", timeout: 10_000 });
    await settled(session.id, "end_turn");
    await openSession(tab, session.id);
    const tool = row(page, "tool");
    await poll(() => tool.getByTestId("tool-result").textContent()).toContain("approved-from-list");
    expect(await tool.getByTestId("tool-confirmation").textContent()).toBe("Allowed");
    const events = await history(server.client, session.id);
    expect(events.filter((e) => e.type === "user.tool_confirmation")).toMatchObject([{ result: "allow" }]);
    await close(tab);
  });

  it("denies inline with a message: the tool never runs and the message is committed", async () => {
    const session = await newSession("deny-inline", "always_ask");
    server.fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo must-not-run" } },
      { kind: "text", text: "Understood, not running it." },
    );
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("run it")] });
    await settled(session.id, "requires_action");
    const tab = await openConsole();
    await signIn(tab);
    await openSession(tab, session.id);
    const { page } = tab;
    const tool = row(page, "tool");
    await tool.getByRole("button", { name: "Deny" }).waitFor();
    expect(await page.getByTestId("run-state").textContent()).toContain("awaiting approval of bash");
    await page.screenshot({ path: `${SHOTS}/approval-inline.png`, fullPage: true });
    await tool.getByLabel("Deny message").fill("not on this machine");
    await tool.getByRole("button", { name: "Deny" }).click();
    await poll(() => tool.getByTestId("tool-confirmation").textContent(), { timeout: 10_000 }).toBe(
      "Denied: not on this machine",
    );
    await settled(session.id, "end_turn");
    const events = await history(server.client, session.id);
    expect(events.filter((e) => e.type === "user.tool_confirmation")).toMatchObject([
      { result: "deny", deny_message: "not on this machine" },
    ]);
    expect(JSON.stringify(events)).not.toContain("must-not-run\\n");
    await close(tab);
  });

  it("a decision made by another client updates the open page", async () => {
    const session = await newSession("decided-elsewhere", "always_ask");
    server.fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo decided-elsewhere" } },
      { kind: "text", text: "Done." },
    );
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("run it")] });
    await settled(session.id, "requires_action");
    const tab = await openConsole();
    await signIn(tab);
    await openSession(tab, session.id);
    const tool = row(tab.page, "tool");
    await tool.getByRole("button", { name: "Allow" }).waitFor();
    const toolUse = (await history(server.client, session.id)).find((e) => e.type === "agent.tool_use")!;
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: toolUse.id, result: "allow" }],
    });
    await tool.getByRole("button", { name: "Allow" }).waitFor({ state: "detached", timeout: 10_000 });
    await poll(() => tool.getByTestId("tool-result").textContent()).toContain("decided-elsewhere");
    await close(tab);
  });

  it("the approvals list follows the server's hints: a decision made through the SDK clears it at once, with no polling", async () => {
    const session = await newSession("hinted-elsewhere", "always_ask");
    server.fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo hinted-elsewhere" } },
      { kind: "text", text: "Done." },
    );
    const tab = await openConsole();
    await signIn(tab);
    const { page } = tab;
    const listReads: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/v1/sessions?")) listReads.push(request.url());
    });
    await page.getByRole("link", { name: /^Approvals/ }).click();
    await page.getByText("Nothing waits for a decision.").waitFor();
    // The ask appears while the page is open: the hint of its commit brings it.
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("run it")] });
    const item = page.getByTestId("approval").filter({ hasText: "hinted-elsewhere" });
    await item.waitFor({ timeout: 10_000 });
    await page.screenshot({ path: `${SHOTS}/approvals-live.png`, fullPage: true });
    // Idle, the list is not re-read: it waits for a hint (the fallback poll is every 3 s).
    await settled(session.id, "requires_action");
    await page.waitForTimeout(500);
    const readsBefore = listReads.length;
    await page.waitForTimeout(4_000);
    expect(listReads.length).toBe(readsBefore);
    const toolUse = (await history(server.client, session.id)).find((e) => e.type === "agent.tool_use")!;
    await server.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: toolUse.id, result: "allow" }],
    });
    await item.waitFor({ state: "detached", timeout: 5_000 });
    await settled(session.id, "end_turn");
    await close(tab);
  });

  it("shows a credential's revisions and custody audit, environment keys and workers, never a secret", async () => {
    const vault = await server.client.beta.vaults.create({ display_name: "custody vault" });
    const planted = ["sk-planted-custody-first-0815", "sk-planted-custody-second-0816"];
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const credential = await server.client.beta.vaults.credentials.create(vault.id, {
      display_name: "rotated token",
      auth: { type: "static_bearer", token: planted[0]!, mcp_server_url: `http://127.0.0.1:${port}/mcp` },
    });
    await server.client.beta.vaults.credentials.update(credential.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token: planted[1]! },
    });
    await server.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
    const environment = await server.client.beta.environments.create({
      name: "self-hosted-env",
      config: { type: "self_hosted" } as never,
    });
    const minted = (await (
      await fetch(`${server.url}/v1/awaken/environments/${environment.id}/keys`, {
        method: "POST",
        headers: { "x-api-key": CONSOLE_API_KEY, "content-type": "application/json" },
        body: JSON.stringify({ name: "rack-1" }),
      })
    ).json()) as { key: string; key_hint: string };
    planted.push(minted.key);

    const tab = await openConsole();
    await signIn(tab);
    const { page } = tab;
    await page.getByRole("link", { name: "Vaults" }).click();
    await page.getByRole("link", { name: "custody vault" }).click();
    await page.getByRole("link", { name: "rotated token" }).click();
    const revisions = page.getByTestId("credential-revisions");
    await poll(() => revisions.locator("tbody tr").count()).toBe(2);
    expect(await revisions.locator("tbody tr").first().textContent()).toMatch(/^2/);
    const audit = page.getByTestId("custody-audit");
    await poll(() => audit.textContent()).toContain("validation_probe");
    expect(await audit.textContent()).toContain("operator probe");
    for (const secret of planted) expect(await page.content()).not.toContain(secret);
    await page.screenshot({ path: `${SHOTS}/credential.png`, fullPage: true });

    // Keyboard only: the nav's links are reachable with Tab and followed with Enter.
    await page.getByRole("link", { name: "Custody", exact: true }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Custody audit" }).waitFor();
    await poll(() => page.getByTestId("custody-audit").textContent()).toContain(credential.id);
    await page.screenshot({ path: `${SHOTS}/custody.png`, fullPage: true });

    await page.getByRole("link", { name: "Keys", exact: true }).click();
    const keys = page.getByTestId("environment-keys");
    await poll(() => keys.textContent()).toContain("rack-1");
    expect(await keys.textContent()).toContain(minted.key_hint);
    for (const secret of planted) expect(await page.content()).not.toContain(secret);
    await page.screenshot({ path: `${SHOTS}/environment-keys.png`, fullPage: true });

    // A run held while the page is open: the worker holding it says so.
    const held = await newSession("held-by-worker");
    server.fake.enqueue({ kind: "hang" });
    await server.client.beta.sessions.events.send(held.id, { events: [userMessage("wait")] });
    await page.getByRole("link", { name: "Workers", exact: true }).click();
    const worker = page.getByTestId("worker").filter({ hasText: "this replica" });
    await worker.waitFor();
    expect(await worker.textContent()).toContain("in-process");
    expect(await worker.textContent()).toMatch(/of 4 slots busy/);
    await poll(() => worker.textContent(), { timeout: 15_000 }).toContain(held.id);
    await page.screenshot({ path: `${SHOTS}/workers.png`, fullPage: true });
    await server.client.beta.sessions.events.send(held.id, { events: [{ type: "user.interrupt" }] });
    await close(tab);
  });

  it("after a failure shows exactly what was committed before it, and the error", async () => {
    const session = await newSession("failure", "always_allow");
    server.fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo committed-before-failure" } },
      { kind: "error", status: 400, message: "messages: field required" },
    );
    await server.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
    await settled(session.id, "retries_exhausted");
    const tab = await openConsole();
    await signIn(tab);
    await openSession(tab, session.id);
    const { page } = tab;
    const failure = page.getByTestId("failure");
    await failure.waitFor();
    expect(await failure.textContent()).toContain("messages: field required");
    expect(await page.getByTestId("run-state").getAttribute("data-phase")).toBe("ended");
    const tool = row(page, "tool");
    expect(await tool.getByTestId("tool-result").textContent()).toContain("committed-before-failure");
    expect(await row(page, "error").textContent()).toContain("messages: field required");
    // The rows are the committed history, in order: the prefix, then the error, then the idle.
    const kinds = await page
      .locator('[data-testid="transcript-row"]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")));
    expect(kinds.indexOf("tool")).toBeLessThan(kinds.indexOf("error"));
    await close(tab, "failure");
  });

  it("interrupts a running run", async () => {
    const session = await newSession("interrupt");
    server.fake.enqueue({ kind: "hang" });
    const tab = await openConsole();
    await signIn(tab);
    await openSession(tab, session.id);
    const { page } = tab;
    await page.getByLabel("Message").fill("take your time");
    await page.getByRole("button", { name: "Send" }).click();
    const interrupt = page.getByRole("button", { name: "Interrupt" });
    await poll(() => interrupt.isEnabled(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByTestId("run-state").getAttribute("data-phase")).toBe("running");
    await interrupt.click();
    await poll(() => page.getByTestId("run-state").getAttribute("data-phase"), { timeout: 10_000 }).toBe(
      "ended",
    );
    const statuses = await page.locator('[data-kind="status"]').allTextContents();
    expect(statuses.some((text) => text.startsWith("Interrupted by a user"))).toBe(true);
    const events = await history(server.client, session.id);
    expect(events.some((e) => e.type === "user.interrupt")).toBe(true);
    await page.screenshot({ path: `${SHOTS}/interrupted.png`, fullPage: true });

    // Archive asks first; the archived session reads as terminated and takes no more input.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Archive" }).click();
    await poll(async () => (await server.client.beta.sessions.retrieve(session.id)).status).toBe(
      "terminated",
    );
    await page.getByRole("button", { name: "Send" }).waitFor({ state: "detached" });
    await close(tab);
  });

  it("shows an agent's versions with a diff, and a vault's credentials without their secrets", async () => {
    const agent = await server.client.beta.agents.create({
      name: "versioned",
      model: MODEL,
      system: "Be brief.",
    });
    await server.client.beta.agents.update(agent.id, { version: 1, system: "Be thorough." });
    const vault = await server.client.beta.vaults.create({ display_name: "ops vault" });
    const planted = "sk-planted-console-secret-4711";
    const credential = await server.client.beta.vaults.credentials.create(vault.id, {
      display_name: "tracker token",
      auth: { type: "static_bearer", token: planted, mcp_server_url: "https://mcp.example.com/mcp" },
    });
    const tab = await openConsole();
    await signIn(tab);
    const { page } = tab;
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    await page.getByRole("link", { name: "versioned" }).click();
    await poll(() => page.getByTestId("agent-version").count()).toBe(2);
    const diff = page.getByTestId("agent-diff");
    const diffLines = async (op: string) =>
      (await diff.locator(`.diff-${op}`).allTextContents()).map((line) => line.trimEnd());
    await poll(() => diffLines("removed")).toEqual(['-   "system": "Be brief.",']);
    expect(await diffLines("added")).toEqual(['+   "system": "Be thorough.",']);
    await page.screenshot({ path: `${SHOTS}/agent.png`, fullPage: true });

    await page.getByRole("link", { name: "Vaults" }).click();
    await page.getByRole("link", { name: "ops vault" }).click();
    await page.getByText(credential.id).waitFor();
    const body = (await page.locator("main").textContent()) ?? "";
    expect(body).toContain("tracker token");
    expect(body).toContain("static_bearer");
    expect(body).toContain("https://mcp.example.com/mcp");
    expect(await page.content()).not.toContain(planted);
    await page.screenshot({ path: `${SHOTS}/vault.png`, fullPage: true });

    // A session pins the vault: its page names the credentials by id, still without the material.
    const pinned = await server.client.beta.sessions.create({
      agent: agent.id,
      environment_id: (await server.client.beta.environments.create({ name: "vault-env" })).id,
      vault_ids: [vault.id],
    });
    await openSession(tab, pinned.id);
    await poll(() => page.getByTestId("pinned-vault").textContent()).toContain(credential.id);
    expect(await page.getByTestId("pinned-vault").textContent()).toContain("static_bearer");
    expect(await page.content()).not.toContain(planted);
    await close(tab);
  });

  it("works with a runtime key: its sessions, and says what the key may not read", async () => {
    const created = (await (
      await fetch(`${server.url}/v1/awaken/api_keys`, {
        method: "POST",
        headers: { "x-api-key": CONSOLE_API_KEY, "content-type": "application/json" },
        body: JSON.stringify({ role: "runtime", label: "console operator" }),
      })
    ).json()) as { key: string };
    const session = await newSession("runtime-key");
    const tab = await openConsole();
    const { page } = tab;
    await page.getByLabel("API key").fill(created.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(`[data-session-id="${session.id}"]`).waitFor();
    await openSession(tab, session.id);
    await poll(() => page.getByTestId("sandbox").textContent()).toContain("not readable with this key");
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    await page.getByRole("alert").waitFor();
    // The browser reports each refused read itself (403); nothing else may be in the console.
    expect(tab.problems.length).toBeGreaterThan(0);
    expect(tab.problems.every((line) => line.includes("403"))).toBe(true);
    tab.problems.length = 0;
    await close(tab);
  });

  it("fits a phone-width screen", async () => {
    const session = await newSession("phone");
    await server.client.beta.sessions.events.send(session.id, {
      events: [userMessage("hello from a phone")],
    });
    await settled(session.id, "end_turn");
    const tab = await openConsole({ width: 390, height: 844 });
    await signIn(tab);
    const { page } = tab;
    const widths = () => page.evaluate<number[]>("[document.documentElement.scrollWidth, window.innerWidth]");
    const [listWidth, viewport] = await widths();
    expect(listWidth).toBeLessThanOrEqual(viewport!);
    await openSession(tab, session.id);
    await row(page, "message").first().waitFor();
    const [pageWidth] = await widths();
    expect(pageWidth).toBeLessThanOrEqual(viewport!);
    await page.screenshot({ path: `${SHOTS}/phone-session.png`, fullPage: true });
    for (const [link, heading] of [
      ["Custody", "Custody audit"],
      ["Keys", "Environment keys"],
      ["Workers", "Workers"],
    ] as const) {
      await page.getByRole("link", { name: link, exact: true }).click();
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      const [width] = await widths();
      expect(width, link).toBeLessThanOrEqual(viewport!);
    }
    await close(tab, "phone-workers");
  });
});
