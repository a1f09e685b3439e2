/**
 * The Console's operations pages in headless chromium against the built `awaken up` with a scripted
 * model: the overview (charts drawn from real runs: completed, failed and interrupted), a failed
 * session shown red with its error and found by the failed filter, a session's run trace, the
 * admin audit filtered by resource type with names for ids, the API keys (no secret, revoked after
 * a confirm), and every page at 420 px without horizontal scrolling. Screenshots go to
 * test-results/console/; the overview's is the README's (docs/console.png, rewritten with
 * AWAKEN_UPDATE_SCREENSHOTS=1).
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_API_KEY, type ConsoleServer, startConsoleServer } from "../support/consoleServer.js";
import { history, MODEL, userMessage } from "../support/sdkHelpers.js";
import { type ConsoleTab, closeConsoleTab, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";
/**
 * The README's picture of the overview, rewritten only when asked (`AWAKEN_UPDATE_SCREENSHOTS=1`):
 * every run's numbers differ, and a test run should not change tracked files.
 */
const README_SHOT =
  process.env.AWAKEN_UPDATE_SCREENSHOTS === "1" ? "docs/console.png" : `${SHOTS}/readme-overview.png`;
const FAILURE = "messages: field required";

let server: ConsoleServer;
let browser: Browser;
let completed: string;
let failed: string;
let traced: string;
let profile: string;

const poll = <T>(read: () => Promise<T> | T, timeout = 15_000) => expect.poll(read, { timeout });

/** Waits (outside a test: beforeAll cannot poll with expect) until `read` answers `want`. */
async function until<T>(read: () => Promise<T>, want: T, timeout = 20_000): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const got = await read();
    if (got === want) return;
    if (Date.now() > deadline) throw new Error(`waited for ${String(want)}, last saw ${String(got)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the session's last idle says why it stopped (the run has settled). */
async function settled(sessionId: string, stop: string): Promise<void> {
  await until(async () => {
    const idle = (await history(server.client, sessionId))
      .filter((e) => e.type === "session.status_idle")
      .at(-1);
    return (idle?.stop_reason as { type: string } | undefined)?.type;
  }, stop);
}

async function session(name: string, permission?: "always_ask" | "always_allow", userProfileId?: string) {
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
  return server.client.beta.sessions.create(
    { agent: agent.id, environment_id: environment.id, title: name },
    userProfileId ? { headers: { "anthropic-user-profile-id": userProfileId } } : {},
  );
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startConsoleServer();
  browser = await launchChromium();

  // Real runs of the scripted model: one completes, one fails for good, one is interrupted.
  // The completed run is attributed to a user profile: the usage panel breaks it out.
  profile = (await server.client.userProfiles.create({ name: "Ops customer" })).id;
  const ok = await session("ops-completed", undefined, profile);
  server.fake.enqueue({ kind: "text", text: "all done" });
  await server.client.beta.sessions.events.send(ok.id, { events: [userMessage("go")] });
  await settled(ok.id, "end_turn");
  completed = ok.id;

  const bad = await session("ops-failed");
  server.fake.enqueue({ kind: "error", status: 400, message: FAILURE });
  await server.client.beta.sessions.events.send(bad.id, { events: [userMessage("go")] });
  await settled(bad.id, "retries_exhausted");
  failed = bad.id;

  const stopped = await session("ops-interrupted");
  server.fake.enqueue({ kind: "hang" });
  await server.client.beta.sessions.events.send(stopped.id, { events: [userMessage("go")] });
  await until(async () => (await server.client.beta.sessions.retrieve(stopped.id)).status, "running");
  await server.client.beta.sessions.events.send(stopped.id, { events: [{ type: "user.interrupt" }] });
  await settled(stopped.id, "end_turn");

  // A run with an approval wait and a tool call, for the trace.
  const asked = await session("ops-traced", "always_ask");
  server.fake.enqueue(
    { kind: "tool_use", name: "bash", input: { command: "echo traced" } },
    { kind: "text", text: "traced it" },
  );
  await server.client.beta.sessions.events.send(asked.id, { events: [userMessage("go")] });
  await settled(asked.id, "requires_action");
  const use = (await history(server.client, asked.id)).find((e) => e.type === "agent.tool_use");
  await server.client.beta.sessions.events.send(asked.id, {
    events: [{ type: "user.tool_confirmation", tool_use_id: use!.id, result: "allow" }],
  });
  await settled(asked.id, "end_turn");
  traced = asked.id;
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signedIn(path: string): Promise<ConsoleTab> {
  const tab = await openConsoleTab(browser, server.url);
  await tab.page.goto(`${server.url}/console/${path}`);
  return tab;
}

/** What scrolls sideways: the page itself, or any scroller in it (a table's wrapper, a chart). */
const overflows = (page: Page) =>
  page.evaluate<string[]>(`(() => {
    const wide = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) wide.push("the page");
    for (const element of document.querySelectorAll("main *")) {
      const x = getComputedStyle(element).overflowX;
      if ((x === "auto" || x === "scroll") && element.scrollWidth > element.clientWidth + 1)
        wide.push(element.tagName.toLowerCase() + "." + element.className);
    }
    return wide;
  })()`);

describe("the Console's operations pages", { timeout: 90_000 }, () => {
  it("opens on an overview drawn from the runs: outcomes per hour, latency, tokens, live sessions and workers", async () => {
    const tab = await signedIn("");
    const { page } = tab;
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const count = (outcome: string) =>
      page.locator(`[data-testid="runs-totals"] [data-outcome="${outcome}"]`).getAttribute("data-count");
    await poll(async () => Number(await count("completed"))).toBeGreaterThanOrEqual(2);
    expect(Number(await count("failed"))).toBeGreaterThanOrEqual(1);
    expect(Number(await count("interrupted"))).toBeGreaterThanOrEqual(1);
    // uPlot drew its canvas, sized to the card.
    const canvas = page.locator('[data-testid="runs-chart"] canvas');
    await canvas.waitFor();
    expect((await canvas.boundingBox())?.width).toBeGreaterThan(300);
    // Pixels the chart inked (any alpha): an empty canvas has none.
    const painted = await page.evaluate<number>(`(() => {
      const c = document.querySelector('[data-testid="runs-chart"] canvas');
      const pixels = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let inked = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) inked++;
      return inked;
    })()`);
    expect(painted).toBeGreaterThan(100);
    expect(await page.getByTestId("latency-p50").textContent()).not.toBe("—");
    expect(await page.getByTestId("tokens").textContent()).toContain(MODEL);
    await poll(() => page.getByTestId("worker-slots").textContent()).toMatch(/of 4 slots busy/);
    // The workspace's usage per day from its committed usage facts; this server sets no quotas.
    const usageDays = page.locator('[data-testid="usage-days"] tbody tr');
    await poll(() => usageDays.count()).toBe(7);
    expect(
      Number((await usageDays.last().locator("td").nth(1).textContent())?.replace(/\D/g, "")),
    ).toBeGreaterThan(0);
    expect(await page.getByTestId("usage").textContent()).toContain("No quotas are set for this workspace.");
    const profileRow = page.locator('[data-testid="usage-profiles"] tbody tr');
    await poll(() => profileRow.count()).toBe(1);
    expect(await profileRow.first().locator("td").first().textContent()).toBe(profile);
    expect(
      Number((await profileRow.first().locator("td").nth(1).textContent())?.replace(/\D/g, "")),
    ).toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}/overview.png`, fullPage: true });
    await page.screenshot({ path: README_SHOT });
    await closeConsoleTab(tab);
  });

  it("shows a failed session red with its error, and finds it with the failed filter", async () => {
    const tab = await signedIn("sessions");
    const { page } = tab;
    const row = page.locator(`[data-testid="session-row"][data-session-id="${failed}"]`);
    await row.waitFor();
    await poll(() => row.getAttribute("data-status")).toBe("failed");
    expect(await row.getByTestId("session-error").textContent()).toContain(FAILURE);
    const color = await page.evaluate<string>(
      `getComputedStyle(document.querySelector('[data-session-id="${failed}"] .status')).color`,
    );
    expect(color).toMatch(/^rgb\((1[5-9]\d|2\d\d), \d{1,2}, \d{1,2}\)$/);
    const ok = page.locator(`[data-testid="session-row"][data-session-id="${completed}"]`);
    expect(await ok.getAttribute("data-status")).toBe("idle");

    await page.getByLabel("Status").selectOption("failed");
    await poll(() =>
      page.locator(`[data-testid="session-row"][data-session-id="${completed}"]`).count(),
    ).toBe(0);
    await row.waitFor();
    const statuses = await page
      .locator('[data-testid="session-row"]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-status")));
    expect(statuses.every((s) => s === "failed")).toBe(true);
    await closeConsoleTab(tab, `${SHOTS}/sessions-failed.png`);
  });

  it("draws a session's run trace: the run, its model requests, the approval wait, the tool call", async () => {
    const tab = await signedIn(`sessions/${traced}`);
    const { page } = tab;
    const trace = page.getByTestId("run-trace");
    await trace.waitFor();
    const kinds = await trace
      .locator('[data-testid="trace-span"]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")));
    expect(kinds.filter((k) => k === "run").length).toBe(2);
    expect(kinds.filter((k) => k === "model").length).toBeGreaterThanOrEqual(2);
    expect(kinds).toContain("tool");
    expect(kinds).toContain("approval");
    expect(kinds).toContain("first_tool");
    const approval = trace.locator('[data-kind="approval"]');
    expect(await approval.textContent()).toContain("approval: bash (allow)");
    expect(await approval.locator(".span-time").textContent()).toMatch(/ms|s|min/);
    await closeConsoleTab(tab, `${SHOTS}/run-trace.png`);

    // A failed run's trace marks it.
    const failedTab = await signedIn(`sessions/${failed}`);
    const run = failedTab.page.locator('[data-testid="trace-span"][data-kind="run"]');
    await run.waitFor();
    expect(await run.getAttribute("data-error")).toBe("true");
    await closeConsoleTab(failedTab);
  });

  it("lists the admin audit by resource type, with names for ids", async () => {
    const tab = await signedIn("audit");
    const { page } = tab;
    const entries = page.locator('[data-testid="audit-entry"]');
    await entries.first().waitFor();
    await page.getByLabel("Resource type").selectOption("environment");
    await poll(async () =>
      (await entries.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-resource-type")))).every(
        (type) => type === "environment",
      ),
    ).toBe(true);
    await poll(() => page.getByTestId("audit").textContent()).toContain("ops-failed-env");
    await closeConsoleTab(tab, `${SHOTS}/audit.png`);
  });

  it("lists API keys without their secrets, and revokes one after a confirm", async () => {
    const response = await fetch(`${server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${CONSOLE_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ role: "runtime", label: "checkout-app" }),
    });
    const created = (await response.json()) as { id: string; key: string };
    const tab = await signedIn("api-keys");
    const { page } = tab;
    const row = page.locator(`[data-testid="api-key"][data-key-id="${created.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("checkout-app");
    expect(await page.content()).not.toContain(created.key);
    expect(await page.content()).not.toContain(CONSOLE_API_KEY);
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Cancel" }).click();
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Confirm revoke" }).click();
    await poll(() => row.textContent()).toContain("revoked");
    const refused = await fetch(`${server.url}/v1/sessions`, {
      headers: { authorization: `Bearer ${created.key}` },
    });
    expect(refused.status).toBe(401);
    await closeConsoleTab(tab, `${SHOTS}/api-keys.png`);
  });

  it("fits 420 px on every page, without scrolling sideways", async () => {
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.setViewportSize({ width: 420, height: 860 });
    const pages: Array<[string, string]> = [
      ["", "overview"],
      ["sessions", "sessions"],
      [`sessions/${traced}`, "session"],
      [`sessions/${failed}`, "session-failed"],
      ["approvals", "approvals"],
      ["agents", "agents"],
      ["environments", "environments"],
      ["vaults", "vaults"],
      ["files", "files"],
      ["skills", "skills"],
      ["memory-stores", "memory-stores"],
      ["custody", "custody"],
      ["environment-keys", "environment-keys"],
      ["workers", "workers"],
      ["audit", "audit"],
      ["api-keys", "api-keys"],
    ];
    const wide: string[] = [];
    for (const [path, name] of pages) {
      await page.goto(`${server.url}/console/${path}`);
      await page.locator("main h1").first().waitFor();
      // The hint stream never lets the network idle: give the page's reads a moment to land.
      await page.waitForTimeout(700);
      for (const what of await overflows(page)) wide.push(`${path || "overview"}: ${what}`);
      await page.screenshot({ path: `${SHOTS}/narrow-${name}.png`, fullPage: true });
    }
    expect(wide).toEqual([]);
    await closeConsoleTab(tab);
  });
});
