/**
 * A multi-agent session on the Console, in headless chromium against the built `awaken up` with
 * the offline model: the thread tree (the lead's primary thread and the researcher it spawned),
 * each thread's own transcript, the session's budget, a workflow run's phases and step threads, and
 * an outcome's verdict on every attempt, at a desktop width and at 420 px. Everything is made
 * through the SDK first.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_API_KEY } from "../support/consoleServer.js";
import { all, isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { leadWithResearcher } from "../support/subagentSetup.js";
import { type ConsoleTab, closeConsoleTab, openConsoleTab } from "./consoleTab.js";
import { launchChromium } from "./headlessChromium.js";

const SHOTS = "test-results/console";

let dataDir: string;
let server: ServerProcess;
let client: Anthropic;
let browser: Browser;
beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), "awaken-console-threads-"));
  // No provider key: the offline model answers, and it obeys `call spawn_agent {…}`.
  server = await startServerProcess({
    dataDir,
    apiKey: CONSOLE_API_KEY,
    args: ["--allow-unsandboxed-tier", "--workers", "4"],
  });
  client = server.client;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  if (server) {
    server.child.kill("SIGTERM");
    await server.exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });
const thread = (page: Page, id: string) => page.locator(`[data-testid="thread"][data-thread-id="${id}"]`);

/** The page must not scroll sideways: everything fits the viewport's width. */
const overflowsX = (page: Page) =>
  page.evaluate<boolean>("document.documentElement.scrollWidth > document.documentElement.clientWidth");

async function openSession(tab: ConsoleTab, sessionId: string): Promise<void> {
  await tab.page.goto(`${server.url}/console/sessions/${sessionId}`);
  await tab.page.getByTestId("run-state").waitFor();
}

/** A lead session (with a $25 budget) whose one turn spawned a researcher, settled. */
async function leadThatSpawned(environmentName: string) {
  const { leadId, environmentId } = await leadWithResearcher(client, environmentName);
  const session = await client.beta.sessions.create({
    agent: leadId,
    environment_id: environmentId,
    title: "threads",
    budget: { type: "limit", max_list_cost: { amount: "2500", currency: "USD" } },
  });
  await client.beta.sessions.events.send(session.id, {
    events: [userMessage('call spawn_agent {"agent_name":"researcher","message":"find A"}')],
  });
  await waitForHistory(client, session.id, (events) => events.some(isEndTurnIdle), 30_000);
  const threads = await all(client.beta.sessions.threads.list(session.id));
  const primary = threads.find((t) => t.parent_thread_id === null)!;
  const child = threads.find((t) => t.parent_thread_id === primary.id)!;
  expect(child).toBeDefined();
  return { session, primary, child };
}

describe("the Console's multi-agent session page", { timeout: 90_000 }, () => {
  it("shows the thread tree; choosing the child shows its own transcript, and back; the budget beside", async () => {
    const { session, primary, child } = await leadThatSpawned("console-threads-env");

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await openSession(tab, session.id);
    const tree = page.getByTestId("thread-tree");
    await thread(page, child.id).waitFor();
    // The child hangs under the primary, each with its agent and status.
    // (Announced by the primary's history, it may stand alone until the thread list is read.)
    await poll(() => thread(page, primary.id).locator(`[data-thread-id="${child.id}"]`).count()).toBe(1);
    expect(await thread(page, primary.id).locator(".thread-line").first().textContent()).toContain("lead");
    expect(await thread(page, child.id).textContent()).toContain("researcher");
    await poll(() => thread(page, child.id).getAttribute("data-status")).toBe("idle");
    expect(await tree.getByRole("link", { name: "lead" }).getAttribute("aria-current")).toBe("page");

    // The primary's transcript holds the task it sent; the budget is the one it was created with.
    const sent = page.locator(
      '[data-testid="transcript-row"][data-kind="thread_message"][data-direction="sent"]',
    );
    await poll(() => sent.textContent()).toContain("find A");
    expect(await page.getByTestId("budget-limit").textContent()).toBe("$25.00 limit");
    expect(await page.getByTestId("budget-spent").textContent()).toMatch(/^\$\d+\.\d\d/);
    await page.screenshot({ path: `${SHOTS}/threads-primary.png`, fullPage: true });

    await tree.getByRole("link", { name: "researcher" }).click();
    const childTranscript = page.getByTestId("thread-transcript");
    await childTranscript.waitFor();
    expect(page.url()).toBe(`${server.url}/console/sessions/${session.id}/threads/${child.id}`);
    expect(await childTranscript.getAttribute("data-thread-id")).toBe(child.id);
    // Its own events, read through the per-thread API: the task received, and its answer.
    const received = childTranscript.locator('[data-kind="thread_message"][data-direction="received"]');
    await poll(() => received.textContent()).toContain("find A");
    const answer = childTranscript.locator('[data-kind="message"][data-role="agent"]');
    await poll(() => answer.textContent()).toContain("You said: find A");
    // Its answer went back to the lead: the event names the thread, the page names its agent.
    const answered = childTranscript.locator('[data-kind="thread_message"][data-direction="sent"]');
    await poll(() => answered.textContent()).toContain("You said: find A");
    expect(await answered.locator(".who").textContent()).toBe("To lead");
    expect(await tree.getByRole("link", { name: "researcher" }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByRole("heading", { name: /Transcript of researcher/ }).count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}/threads-child.png`, fullPage: true });

    // At 420 px the tree, the transcript and the panels fit the width.
    await page.setViewportSize({ width: 420, height: 900 });
    await childTranscript.waitFor();
    expect(await overflowsX(page)).toBe(false);
    expect(await tree.isVisible()).toBe(true);
    await page.screenshot({ path: `${SHOTS}/threads-narrow.png`, fullPage: true });

    await tree.getByRole("link", { name: "lead" }).click();
    await poll(() => sent.textContent()).toContain("find A");
    expect(await page.getByTestId("thread-transcript").count()).toBe(0);
    expect(page.url()).toBe(`${server.url}/console/sessions/${session.id}`);
    await closeConsoleTab(tab);
  });

  it("shows an outcome's verdict on each attempt, with its iteration", async () => {
    const agent = await client.beta.agents.create({ name: "writer", model: MODEL });
    const environment = await client.beta.environments.create({ name: "console-outcome-env" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.define_outcome",
          description: "Write a line about the season.",
          rubric: { type: "text", content: "The answer must mention `autumn leaves`." },
        },
      ],
    });
    await waitForHistory(client, session.id, (events) => events.some(isEndTurnIdle), 30_000);

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.setViewportSize({ width: 420, height: 900 });
    await openSession(tab, session.id);
    const outcome = page.getByTestId("outcome");
    await poll(() => outcome.getAttribute("data-result")).toBe("satisfied");
    expect(await outcome.textContent()).toContain("Write a line about the season.");
    expect(await outcome.textContent()).toContain("iteration 1");
    const evaluations = outcome.getByTestId("evaluation");
    // The verdicts come from the history, which may be read after the session itself.
    await poll(() =>
      evaluations.evaluateAll((items) => items.map((i) => i.getAttribute("data-result"))),
    ).toEqual(["needs_revision", "satisfied"]);
    expect(await evaluations.first().textContent()).toContain("Iteration 0: needs revision");
    expect(await evaluations.first().textContent()).toContain("autumn leaves");
    // No roster, no budget: a single thread needs no tree, and the budget says there is none.
    expect(await page.getByTestId("thread-tree").count()).toBe(0);
    expect(await page.getByTestId("budget-limit").textContent()).toBe("none");
    expect(await overflowsX(page)).toBe(false);
    await page.screenshot({ path: `${SHOTS}/outcome-narrow.png`, fullPage: true });
    await closeConsoleTab(tab);
  });
  it("shows a workflow run's phases, result and step threads, each under the run it belongs to", async () => {
    const researcher = await client.beta.agents.create({ name: "researcher", model: MODEL });
    const writer = await client.beta.agents.create({ name: "writer", model: MODEL });
    const lead = await client.beta.agents.create({
      name: "planner",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "disabled" },
        workflows: { type: "enabled", predefined_agents: [researcher.id, writer.id] },
      },
    });
    const environment = await client.beta.environments.create({
      name: "console-workflow-env",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environment.id });
    const plan = {
      name: "report",
      description: "Research, then write.",
      phases: [
        { name: "research", steps: [{ agent_name: "researcher", message: "find A" }] },
        { name: "write", description: "One draft.", steps: [{ agent_name: "writer", message: "draft C" }] },
      ],
    };
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage(`call start_workflow ${JSON.stringify(plan)}`)],
    });
    const events = await waitForHistory(client, session.id, (all) => all.some(isEndTurnIdle), 30_000);
    const created = events.find((e) => e.type === "workflow_run.created");
    const run = created?.workflow_run_id as string;
    expect(run).toBeDefined();
    const steps = (await all(client.beta.sessions.threads.list(session.id))).filter(
      (t) => t.parent_thread_id,
    );
    expect(steps).toHaveLength(2);

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await openSession(tab, session.id);
    const panel = page.locator(`[data-testid="workflow-run"][data-workflow-run-id="${run}"]`);
    await panel.waitFor();
    await poll(() => panel.getAttribute("data-status")).toBe("ended");
    expect(await panel.textContent()).toContain("report");
    expect(await panel.textContent()).toContain("Research, then write.");
    const phases = panel.getByTestId("workflow-phase");
    expect(await phases.evaluateAll((items) => items.map((i) => i.getAttribute("data-state")))).toEqual([
      "ended",
      "ended",
    ]);
    expect(await phases.nth(0).textContent()).toMatch(/^research \(ended\)started .+, ended .+/);
    expect(await phases.nth(1).textContent()).toContain("One draft.");
    expect(await panel.getByTestId("workflow-result").textContent()).toBe("Result: completed");
    // Each step's thread names the run it belongs to.
    for (const step of steps)
      await poll(() => thread(page, step.id).getByTestId("thread-workflow").textContent()).toBe(
        "workflow report",
      );
    await page.setViewportSize({ width: 420, height: 900 });
    expect(await overflowsX(page)).toBe(false);
    await page.screenshot({ path: `${SHOTS}/workflow-narrow.png`, fullPage: true });
    await closeConsoleTab(tab);
  });

  it("lists a subagent's ask on the Approvals page; Allow there reaches the subagent and the turn ends", async () => {
    const researcher = await client.beta.agents.create({
      name: "asking researcher",
      model: MODEL,
      tools: [
        {
          type: "agent_toolset_20260401",
          configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
        },
      ] as never,
    });
    const lead = await client.beta.agents.create({
      name: "asking lead",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "enabled", predefined_agents: [researcher.id] },
      },
    });
    const environment = await client.beta.environments.create({
      name: "console-subagent-ask",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({
      agent: lead.id,
      environment_id: environment.id,
      title: "subagent asks",
    });
    const spawn = JSON.stringify({
      agent_name: "asking researcher",
      message: 'call bash {"command":"echo from-child"}',
    });
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage(`call spawn_agent ${spawn}`)],
    });
    // The child's ask, cross-posted on the session's history, while the session itself still runs.
    await waitForHistory(
      client,
      session.id,
      (events) => events.some((e) => e.type === "session.thread_status_idle"),
      30_000,
    );

    const tab = await openConsoleTab(browser, server.url);
    const { page } = tab;
    await page.getByRole("link", { name: /^Approvals/ }).click();
    const item = page.getByTestId("approval").filter({ hasText: "subagent asks" });
    await item.waitFor({ timeout: 15_000 });
    expect(await item.textContent()).toContain("echo from-child");
    expect(await item.getByTestId("approval-thread").textContent()).toContain("asked by a subagent");
    await page.screenshot({ path: `${SHOTS}/approvals-subagent.png`, fullPage: true });
    await item.getByRole("button", { name: "Allow" }).click();
    await item.waitFor({ state: "detached", timeout: 15_000 });
    const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 30_000);
    expect(JSON.stringify(events.filter((e) => e.type === "agent.message").at(-1))).toContain("from-child");
    expect(tab.problems).toEqual([]);
    await closeConsoleTab(tab);
  });
});
