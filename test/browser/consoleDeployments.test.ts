/**
 * The Console's Deployments page in headless chromium against the built `awaken up`: a deployment
 * made through the SDK shows its schedule, next instant and state; its page lists its runs, each
 * linked to the session it opened. The name is hostile markup: it must show as its literal text.
 */
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleServer, startConsoleServer } from "../support/consoleServer.js";
import { MODEL } from "../support/sdkHelpers.js";
import { closeConsoleTab, injectedElements, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";
const HOSTILE_NAME = "<img src=x onerror=alert(1)> nightly";

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

describe("the Console's Deployments page", { timeout: 90_000 }, () => {
  it("lists deployments with schedule, next run and state; a deployment's runs link to their sessions", async () => {
    const client = server.client;
    const agent = await client.beta.agents.create({ name: "Nightly", model: MODEL });
    const environment = await client.beta.environments.create({ name: "nightly" });
    const deployment = await client.beta.deployments.create({
      agent: agent.id,
      environment_id: environment.id,
      initial_events: [{ type: "user.message", content: [{ type: "text", text: "hello" }] }],
      name: HOSTILE_NAME,
      schedule: { type: "cron", expression: "0 3 * * *", timezone: "Europe/Paris" },
    });
    const run = await client.beta.deployments.run(deployment.id);

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.getByRole("link", { name: "Deployments" }).click();
    const row = page.locator(`[data-testid="deployment-row"][data-deployment-id="${deployment.id}"]`);
    await row.waitFor();
    const rowText = (await row.textContent()) ?? "";
    expect(rowText).toContain(HOSTILE_NAME);
    expect(rowText).toContain("0 3 * * * in Europe/Paris");
    expect(rowText).toContain("active");
    expect(rowText).toContain(new Date(deployment.schedule!.upcoming_runs_at![0]!).toLocaleString());
    expect(await injectedElements(page)).toBe(0);

    await row.getByRole("link", { name: HOSTILE_NAME }).click();
    const runRow = page.locator(`[data-testid="deployment-run-row"][data-run-id="${run.id}"]`);
    await runRow.waitFor();
    expect(await runRow.textContent()).toContain("manual");
    expect(await injectedElements(page)).toBe(0);
    await page.screenshot({ path: `${SHOTS}/deployment.png`, fullPage: true });
    await runRow.getByRole("link", { name: run.session_id! }).click();
    await page.waitForURL(new RegExp(`sessions/${run.session_id}$`));
    await closeConsoleTab(tab, `${SHOTS}/deployment-session.png`);
  });
});
