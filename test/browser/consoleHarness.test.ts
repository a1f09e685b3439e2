/**
 * The Console's Brain panel in headless chromium against the built `awaken up`, with the scripted
 * ACP harness installed from a loopback registry and launched in the session's sandbox: a session
 * on the `fake` runtime answers a text turn and one allowed tool call, and its page (open before
 * the turn) shows the runtime, the stages up to `ready`, the harness's own name and version, and
 * labels the harness's call as its own; a session on `fake-broken` shows `failed` with its reason,
 * hostile markup in it shown as text.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HARNESS_PACKAGE, serveHarnessPackage } from "../support/acp/harnessPackage.js";
import { CONSOLE_API_KEY } from "../support/consoleServer.js";
import type { FakeNpmRegistry } from "../support/fakeNpmRegistry.js";
import { userMessage } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { closeConsoleTab, injectedElements, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";
const TURN_MS = 60_000;
const NOTE = " <img src=x onerror=alert(1)>";

let dir: string;
let registry: FakeNpmRegistry;
let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "awaken-console-harness-"));
  const served = await serveHarnessPackage(dir);
  registry = served.registry;
  // The broken runtime's reason carries markup, which the page must show as text.
  const runtimes = JSON.parse(readFileSync(served.runtimesFile, "utf8"));
  for (const runtime of runtimes.runtimes)
    if (runtime.name === "fake-broken") runtime.env.FAKE_HARNESS_FAIL_NOTE = NOTE;
  writeFileSync(served.runtimesFile, JSON.stringify(runtimes));
  server = await startServerProcess({
    dataDir: join(dir, "data"),
    apiKey: CONSOLE_API_KEY,
    env: { HOME: process.env.HOME, npm_config_registry: registry.url, npm_config_fetch_retries: "0" },
    args: ["--acp-runtimes", served.runtimesFile],
  });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
  await server?.exited;
  await registry?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function harnessSession(runtime: string) {
  const agent = await server.client.beta.agents.create({
    name: `acp-${runtime}`,
    model: `acp:${runtime}`,
    tools: [
      {
        type: "agent_toolset_20260401",
        default_config: { permission_policy: { type: "always_allow" } },
      },
    ] as never,
  });
  const environment = await server.client.beta.environments.create({
    name: `acp-${runtime}-env`,
    config: {
      type: "cloud",
      packages: { type: "packages", npm: [`${HARNESS_PACKAGE}@1.0.0`] },
      sandbox: { provisioning: "eager" },
    } as never,
  });
  return server.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

describe("the Console's Brain panel", { timeout: 180_000 }, () => {
  it("follows a harness to ready, labels its own call, and shows a failed launch's reason as text", async () => {
    const session = await harnessSession("fake");
    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.goto(`${server.url}/console/sessions/${session.id}`);
    const panel = page.getByTestId("harness");
    await panel.waitFor();
    expect(await panel.getByTestId("harness-runtime").textContent()).toBe("fake");
    await panel.getByText("not launched yet").waitFor();

    // The page is open before the turn: the panel follows the launch as it is committed.
    await server.client.beta.sessions.events.send(session.id, {
      events: [userMessage(['tool execute listing {"command":"ls","args":["-a"]}', "say listed"].join("\n"))],
    });
    await expect
      .poll(() => panel.getAttribute("data-stage"), { timeout: TURN_MS, interval: 200 })
      .toBe("ready");
    expect(await panel.getByTestId("harness-stage").textContent()).toBe("ready");
    expect(await panel.getByTestId("harness-agent").textContent()).toBe("fake-harness 1.0.0");
    expect(await panel.textContent()).toContain("new");
    expect(await panel.getByTestId("harness-launch").locator("li").allTextContents()).toEqual([
      expect.stringMatching(/^installing /),
      expect.stringMatching(/^launching /),
      expect.stringMatching(/^initializing /),
      expect.stringMatching(/^ready /),
    ]);

    // The harness's own call, labelled as its own, with its result; then its text.
    const call = page.locator('[data-testid="transcript-row"][data-kind="tool"]');
    await expect
      .poll(() => call.getAttribute("data-tool-state"), { timeout: TURN_MS, interval: 200 })
      .toBe("done");
    expect(await call.locator(".who").textContent()).toBe("harness · bash");
    await page.locator('[data-kind="message"][data-role="agent"]').getByText("listed").waitFor();
    await page.screenshot({ path: `${SHOTS}/harness-ready.png`, fullPage: true });

    const broken = await harnessSession("fake-broken");
    await page.goto(`${server.url}/console/sessions/${broken.id}`);
    await panel.waitFor();
    await server.client.beta.sessions.events.send(broken.id, { events: [userMessage("say never")] });
    await expect
      .poll(() => panel.getAttribute("data-stage"), { timeout: TURN_MS, interval: 200 })
      .toBe("failed");
    expect(await panel.getByTestId("harness-runtime").textContent()).toBe("fake-broken");
    const error = await panel.getByTestId("harness-error").textContent();
    expect(error).toContain("failing at initialize as asked");
    expect(error).toContain(NOTE.trim());
    expect(await injectedElements(page)).toBe(0);
    // Relaunched once before failing: both attempts listed under the one launch.
    expect(await panel.getByTestId("harness-launch").locator("li").count()).toBe(6);
    await closeConsoleTab(tab, `${SHOTS}/harness-failed.png`);
  });
});
