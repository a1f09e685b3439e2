/**
 * The Console's Builds page in headless chromium against the built `awaken up`: a container-tier
 * environment's image build, failed through the build-worker routes (no real build), shows its
 * status, error and log tail (hostile markup in the log shows as text); the environment's page shows
 * the image status with a link to the build; Rebuild puts it back in line (the next claim gets it,
 * a new epoch), and once settled ready the page shows the digest.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageBuildService } from "../../src/coordinator/imageBuilds/imageBuildService.js";
import { PackageResolutionRecords } from "../../src/coordinator/packageResolutions.js";
import { systemClock } from "../../src/kernel/clock.js";
import { packageResolution } from "../../src/kernel/packageResolution.js";
import { SqlEnvironmentStore } from "../../src/stores/sql/sqlEnvironmentStore.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";
import { CONSOLE_API_KEY } from "../support/consoleServer.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { closeConsoleTab, injectedElements, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";
const BUILD_TOKEN = "console-build-worker-token-0123456789";
const BASE = "localhost/awaken-console-build-base:1";
const DIGEST = `sha256:${"e".repeat(64)}`;
const LOG_TAIL = "npm ERR! 404 left-pad@9.9.9\n<img src=x onerror=alert(1)> not in the registry";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read by assertions only
type Wire = Record<string, any>;

let dir: string;
let server: ServerProcess;
let browser: Browser;
let db: SqliteHandle;

/** What scrolls sideways: the page itself, or any scrolling box in it. */
const sidewaysScroll = (page: Page) =>
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

async function buildCall(path: string, body: unknown): Promise<Wire> {
  const response = await fetch(`${server.url}/v1/awaken/build-worker${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${BUILD_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Wire;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "awaken-console-builds-"));
  server = await startServerProcess({
    dataDir: join(dir, "data"),
    apiKey: CONSOLE_API_KEY,
    env: { AWAKEN_ALLOWED_CONTAINER_IMAGES: BASE, AWAKEN_BUILD_WORKER_TOKEN: BUILD_TOKEN },
  });
  db = await openSqlite(join(dir, "data", "awaken.db"));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await db?.close();
  server?.child.kill("SIGTERM");
  await server?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the Console's Builds page", { timeout: 90_000 }, () => {
  it("shows a failed build's log tail, links it from its environment, and rebuilds it", async () => {
    const env = await server.client.beta.environments.create({
      name: "left-pad box",
      config: {
        type: "cloud",
        packages: { npm: ["left-pad@9.9.9"] },
        sandbox: { tier: "container", image: BASE },
      } as never,
    });
    // Frozen as a preparing worker freezes it: the build demand appears.
    const records = new PackageResolutionRecords(
      new SqlEnvironmentStore(db.db),
      systemClock,
      new ImageBuildService(new SqlImageBuildStore(db.db), systemClock),
    );
    await records.record(
      { environmentId: env.id, revision: 1 },
      packageResolution({
        format: 1,
        npm: {
          lockfile: {
            lockfileVersion: 3,
            packages: {
              "": { dependencies: { "left-pad": "9.9.9" } },
              "node_modules/left-pad": {
                version: "9.9.9",
                resolved: "http://127.0.0.1:9/left-pad/-/left-pad-9.9.9.tgz",
                integrity: "sha512-AAAA",
              },
            },
          },
        } as never,
        pip: null,
        unfrozen: [],
      }),
    );
    const { job } = await buildCall("/claim", { owner: "bw-console" });
    const lease = { buildId: job.buildId, owner: "bw-console", epoch: job.epoch };
    await buildCall("/settle", {
      ...lease,
      outcome: { kind: "failed", error: "npm ci exited 1", logTail: LOG_TAIL },
    });

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    // The environment's page: its image failed, with a link to the build.
    await page.getByRole("link", { name: "Environments", exact: true }).click();
    await page.getByRole("link", { name: "left-pad box" }).click();
    const image = page.getByTestId("environment-image");
    await image.getByText("failed").waitFor();
    expect(await image.textContent()).toContain("npm ci exited 1");
    await image.getByRole("link", { name: `Build ${job.buildId}` }).click();

    // The Builds page, opened on that build: its log tail shown, as text.
    const row = page.locator(`[data-testid="image-build"][data-build-id="${job.buildId}"]`);
    await row.waitFor();
    expect(await row.getByTestId("image-status").textContent()).toBe("failed");
    expect(await row.textContent()).toContain("left-pad box");
    const log = row.getByTestId("image-build-log");
    expect(await log.isVisible()).toBe(true);
    expect(await log.textContent()).toBe(LOG_TAIL);
    expect(await injectedElements(page)).toBe(0);

    // The same page from the navigation: the log is folded until asked for.
    await page.getByRole("link", { name: "Builds", exact: true }).click();
    await row.getByTestId("image-status").waitFor();
    expect(await log.isVisible()).toBe(false);
    await row.getByText("Build log (last lines)").click();
    expect(await log.isVisible()).toBe(true);

    await row.getByRole("button", { name: "Rebuild" }).click();
    await expect
      .poll(() => row.getByTestId("image-status").textContent(), { timeout: 15_000 })
      .toBe("pending");
    expect(await row.getByRole("button", { name: "Rebuild" }).count()).toBe(0);
    const again = (await buildCall("/claim", { owner: "bw-console" })).job;
    expect(again).toMatchObject({ buildId: job.buildId, epoch: job.epoch + 1 });
    await buildCall("/settle", {
      buildId: job.buildId,
      owner: "bw-console",
      epoch: again.epoch,
      outcome: {
        kind: "ready",
        digest: DIGEST,
        imageReference: `127.0.0.1:5000/awaken/environments@${DIGEST}`,
        logTail: "pushed",
      },
    });
    // The page looks again while a build is in line: the digest appears on its own.
    await expect.poll(() => row.getByTestId("image-status").textContent(), { timeout: 15_000 }).toBe("ready");
    expect(await row.textContent()).toContain(DIGEST);
    await page.screenshot({ path: `${SHOTS}/builds.png`, fullPage: true });

    // Both pages fit 420 px without scrolling sideways (a digest and a log wrap).
    await page.setViewportSize({ width: 420, height: 860 });
    for (const path of ["builds", `environments/${env.id}`]) {
      await page.goto(`${server.url}/console/${path}`);
      await page.locator("main h1").first().waitFor();
      await page.getByTestId("image-status").first().waitFor();
      expect(await sidewaysScroll(page), path).toEqual([]);
    }
    await closeConsoleTab(tab, `${SHOTS}/narrow-builds-environment.png`);
  });
});
