#!/usr/bin/env node
// Console benchmark: the first load of /console/sessions from a server that has just started (navigation to
// the sign-in form on screen, and from the click on "Sign in", once the page has settled, to the
// sessions list), and the time to render a
// session of about 1 000 committed events (navigation to the transcript showing every row's data,
// plus a scroll from the end to the top) with the number of rows actually in the DOM (virtualized).
//
// Usage: npm run build && node bench/console.mjs [--events 1000] [--repeat 3]
//   Needs Debian's chromium (/usr/bin/chromium). The server is the built `awaken up` with the
//   offline model, on a fresh SQLite data dir that is removed afterwards.
// Results go to stdout; progress goes to stderr.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { chromium } from "playwright-core";
import { benchArgs } from "./args.mjs";
import { startAwaken } from "./processes.mjs";
import { withScope } from "./scope.mjs";

const values = benchArgs(import.meta.url, {
  events: { type: "string", default: "1000" },
  repeat: { type: "string", default: "3" },
});
const targetEvents = Number(values.events);
const repeat = Number(values.repeat);
const API_KEY = "sk-awaken-bench-console";
const progress = (line) => process.stderr.write(`${line}\n`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function startServer(scope) {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-bench-console-"));
  scope.defer(() => rmSync(dataDir, { recursive: true, force: true }));
  const { match } = await startAwaken(scope, {
    label: "awaken up",
    args: ["up", "--port", "0", "--data-dir", dataDir],
    env: { AWAKEN_API_KEY: API_KEY },
    ready: /listening on (http:\/\/\S+)/,
  });
  return match[1];
}

/** Navigation start → the sign-in form, then → the sessions list after signing in. */
async function coldLoad(browser, url) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${url}/console/sessions`);
    await page.getByLabel("API key").waitFor();
    const signInMs = performance.now() - started;
    // A person takes a moment to paste the key: the rest of the Console has loaded meanwhile.
    await page.waitForLoadState("networkidle");
    await page.getByLabel("API key").fill(API_KEY);
    const clicked = performance.now();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    return { signInMs, listMs: performance.now() - clicked };
  } finally {
    await context.close();
  }
}

/** Turns of the offline model until the session has at least `count` committed events. */
async function longSession(client, count) {
  const agent = await client.beta.agents.create({ name: "bench-console", model: "claude-sonnet-4-6" });
  const environment = await client.beta.environments.create({ name: "bench-console" });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  let events = 0;
  for (let turn = 1; events < count; turn++) {
    await client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: `turn ${turn}` }] }],
    });
    for (;;) {
      const last = await client.beta.sessions.events.list(session.id, { order: "desc", limit: 1 });
      if (last.data[0]?.type === "session.status_idle") break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    events = 0;
    for await (const _ of client.beta.sessions.events.list(session.id, { limit: 1000 })) events++;
    if (turn % 25 === 0) progress(`  ${events} events after ${turn} turns`);
  }
  return { id: session.id, events };
}

/** Navigation → every row projected; then a scroll to the top rendered. */
async function renderLong(browser, url, sessionId) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(`${url}/console/sessions`);
    await page.getByLabel("API key").fill(API_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    const started = performance.now();
    await page.goto(`${url}/console/sessions/${sessionId}`);
    await page.getByTestId("run-state").waitFor();
    await page.waitForFunction(() => {
      const transcript = document.querySelector('[data-testid="transcript"]');
      return (
        transcript !== null &&
        Number(transcript.getAttribute("data-rows")) > 0 &&
        document.querySelector('[data-testid="run-state"]')?.getAttribute("data-phase") === "ended"
      );
    });
    const renderMs = performance.now() - started;
    const rows = Number(await page.getByTestId("transcript").getAttribute("data-rows"));
    const inDom = await page.locator('[data-testid="transcript-row"]').count();
    const scrolled = performance.now();
    await page.getByTestId("transcript").evaluate((el) => {
      el.scrollTop = 0;
    });
    await page
      .locator('[data-testid="transcript-row"][data-kind="message"][data-role="user"]')
      .first()
      .waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="transcript"]').scrollTop === 0);
    return { renderMs, scrollMs: performance.now() - scrolled, rows, inDom };
  } finally {
    await context.close();
  }
}

await withScope(async (scope) => {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox"],
  });
  scope.defer(() => browser.close());
  const colds = [];
  for (let i = 0; i < repeat; i++) {
    await withScope(async (run) => {
      const url = await startServer(run);
      colds.push(await coldLoad(browser, url));
    });
    progress(`cold load ${i + 1}/${repeat}: ${colds.at(-1).signInMs.toFixed(0)} ms`);
  }
  const url = await startServer(scope);
  const client = new Anthropic({ baseURL: url, apiKey: API_KEY, maxRetries: 0 });
  progress(`building a session of ${targetEvents} events`);
  const session = await longSession(client, targetEvents);
  const renders = [];
  for (let i = 0; i < repeat; i++) renders.push(await renderLong(browser, url, session.id));

  const ms = (x) => `${x.toFixed(0)} ms`;
  console.log("Console (headless chromium, loopback, built `awaken up`, offline model)");
  console.log(
    `  cold first load → sign-in form     median ${ms(median(colds.map((c) => c.signInMs)))}  (runs: ${colds.map((c) => ms(c.signInMs)).join(", ")})`,
  );
  console.log(`  sign in (page settled) → sessions list  median ${ms(median(colds.map((c) => c.listMs)))}`);
  console.log(
    `  ${session.events}-event session → rendered   median ${ms(median(renders.map((r) => r.renderMs)))}  (runs: ${renders.map((r) => ms(r.renderMs)).join(", ")})`,
  );
  console.log(`  scroll end → top rendered          median ${ms(median(renders.map((r) => r.scrollMs)))}`);
  console.log(`  transcript rows ${renders[0].rows}, rows in the DOM ${renders[0].inDom} (virtualized)`);
});
