/**
 * The Console's Webhooks page in headless chromium against the built `awaken up`: an endpoint whose
 * receiver failed every attempt shows its dead-lettered delivery, and the Redeliver button sends it
 * again under the same `webhook-id`, verified by the SDK's `unwrap()`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_API_KEY } from "../support/consoleServer.js";
import { MODEL } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startWebhookReceiver } from "../support/webhookReceiver.js";
import { closeConsoleTab, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const unwrapper = new Anthropic({ apiKey: "unused" });
let server: ServerProcess;
let browser: Browser;
let dataDir: string;
let key = "";
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-console-webhooks-"));
  receiver = await startWebhookReceiver({
    verify: (raw, headers) => unwrapper.beta.webhooks.unwrap(raw, { headers, key }),
  });
  // Backoff from 10 ms: ten failed attempts take about ten seconds.
  server = await startServerProcess({
    dataDir,
    apiKey: CONSOLE_API_KEY,
    env: { AWAKEN_ALLOW_PUSH_HOSTS: "127.0.0.1" },
    args: ["--push-retry-base-ms", "10"],
  });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
  await server?.exited;
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the Console's Webhooks page", () => {
  it("lists a dead-lettered delivery and redelivers it with the same webhook-id", async () => {
    const endpoint = await server.client.beta.organization.webhooks.create({
      url: receiver.url,
      enabled_events: ["agent.created"] as never,
      name: "pager",
    });
    key = endpoint.signing_secret;
    receiver.status = 500;
    const agent = await server.client.beta.agents.create({ name: "unlucky", model: MODEL });
    await expect
      .poll(
        async () =>
          (
            await server.client.get<{ data: Array<{ state: string }> }>(
              `/v1/awaken/webhooks/${endpoint.id}/deliveries`,
              { query: { state: "abandoned" } },
            )
          ).data.length,
        { timeout: 30_000 },
      )
      .toBe(1);
    const tried = receiver.received.filter((p) => p.body?.data?.id === agent.id);
    expect(tried).toHaveLength(10);

    const tab = await openConsoleTab(browser, server.url);
    await tab.page.getByRole("link", { name: "Webhooks" }).click();
    await tab.page.getByRole("heading", { name: /pager/ }).waitFor();
    const row = tab.page.getByTestId("webhook-delivery");
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain("agent.created");
    expect(await tab.page.content()).not.toContain(endpoint.signing_secret);
    receiver.status = 200;
    await row.getByRole("button", { name: "Redeliver" }).click();
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(0);
    const got = await receiver.waitFor((a) => a.some((p) => p.body?.data?.id === agent.id));
    const delivered = got.filter((p) => p.body?.data?.id === agent.id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.verified).toBe(true);
    expect(delivered[0]?.headers["webhook-id"]).toBe(tried[0]?.headers["webhook-id"]);
    await closeConsoleTab(tab, "test-results/console/webhooks.png");
  });
});
