/**
 * The official `useChat` hook in headless chromium against the real server's AI SDK edge: a built-in
 * tool under `always_ask` shows as an approval request, the page's Approve / Deny answers it with
 * `addToolApprovalResponse`, the hook re-posts on its own, and the continuation speaks on the same
 * assistant message. The committed history is then read back through the Managed API.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatPageAiSdk, type ChatPageServer, startChatPageServer } from "../support/chatPageServer.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { history, isEndTurnIdle, MODEL, textOf, type WireEvent } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";
import { launchChromium } from "./headlessChromium.js";

const MAJORS: readonly ChatPageAiSdk[] = [6, 7];

let fake: FakeModelServer | undefined;
let t: TestServer | undefined;
/** The page built with each AI SDK major (`ai` 6 + `@ai-sdk/react` 3, `ai` 7 + `@ai-sdk/react` 4). */
const pagesByMajor = new Map<ChatPageAiSdk, ChatPageServer>();
/** The page of the block now running (set by its `beforeAll`). */
let pages: ChatPageServer | undefined;
let browser: Browser | undefined;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    // Its environment runs tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
  });
  for (const major of MAJORS) pagesByMajor.set(major, await startChatPageServer(t.server.url, major));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  for (const page of pagesByMajor.values()) await page.close();
  await t?.close();
  await fake?.close();
});

const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);

/** An agent whose bash asks before every call, and an environment that runs it unsandboxed. */
async function gatedAgent(): Promise<{ agentId: string; environmentId: string }> {
  const agent = await t!.client.beta.agents.create({
    name: "browser-gated",
    model: MODEL,
    tools: [
      {
        type: "agent_toolset_20260401",
        configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
      },
    ] as never,
  });
  const environment = await t!.client.beta.environments.create({
    name: "browser-gated",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return { agentId: agent.id, environmentId: environment.id };
}

/** Opens the page for the agent in a fresh browser context and sends `text` from its form. */
async function chatAbout(
  ids: { agentId: string; environmentId: string },
  text: string,
): Promise<{ tab: Page; problems: string[]; close(): Promise<void> }> {
  const context = await browser!.newContext();
  const tab = await context.newPage();
  const problems: string[] = [];
  tab.on("pageerror", (error) => problems.push(String(error)));
  await tab.goto(pages!.pageUrl({ key: TEST_API_KEY, agent: ids.agentId, environment: ids.environmentId }));
  await tab.getByLabel("Message", { exact: true }).fill(text);
  await tab.getByRole("button", { name: "Send" }).click();
  return { tab, problems, close: () => context.close() };
}

const assistantMessages = (tab: Page) => tab.locator('[data-testid="message"][data-role="assistant"]');

/** Waits for `locator`, failing with the page's error line when the chat went wrong instead. */
async function waitFor(tab: Page, locator: Locator, what: string): Promise<void> {
  try {
    await locator.waitFor({ timeout: 15_000 });
  } catch (error) {
    const line = await tab
      .getByTestId("error")
      .textContent({ timeout: 100 })
      .catch(() => null);
    const body = await tab
      .getByTestId("messages")
      .textContent({ timeout: 100 })
      .catch(() => "");
    throw new Error(`waiting for ${what}: ${line ?? "no error line"}; the page shows:\n${body}`, {
      cause: error,
    });
  }
}

/** The one session the chat opened for this agent (the chat id names it). */
async function sessionOf(agentId: string): Promise<string> {
  const sessions = (await t!.client.beta.sessions.list({ agent_id: agentId })).data;
  expect(sessions).toHaveLength(1);
  return sessions[0]!.id;
}

/** The history once the session's turn has ended (the page's last stream may still be closing). */
async function settledHistory(sessionId: string): Promise<WireEvent[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = await history(t!.client, sessionId);
    if (events.at(-1) && isEndTurnIdle(events.at(-1)!)) return events;
    if (Date.now() > deadline)
      throw new Error(`the turn never ended: ${events.map((e) => e.type).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// Every test runs once per page build: the edge serves the hooks of AI SDK 6 and 7 alike.
describe.each(MAJORS)("ai@%i", (major) => {
  beforeAll(() => {
    pages = pagesByMajor.get(major);
  });

  describe("useChat tool approval in chromium", { timeout: 60_000 }, () => {
    it("Approve runs the tool once and the model's answer continues the same assistant message", async () => {
      const ids = await gatedAgent();
      fake!.enqueue(
        { kind: "tool_use", name: "bash", input: { command: "echo approved >> proof.txt && cat proof.txt" } },
        { kind: "text", text: "The command ran." },
      );
      const chat = await chatAbout(ids, "please run it");
      try {
        const { tab } = chat;
        const approve = tab.getByRole("button", { name: "Approve" });
        await waitFor(tab, approve, "the Approve button");
        await expect.poll(() => assistantMessages(tab).count()).toBe(1);
        const assistant = assistantMessages(tab).first();
        const messageId = await assistant.getAttribute("data-message-id");
        const tool = assistant.getByTestId("tool-part");
        expect(await tool.getAttribute("data-tool-name")).toBe("bash");
        expect(await tool.getAttribute("data-state")).toBe("approval-requested");
        expect(await tool.getByTestId("tool-input").textContent()).toContain("echo approved");
        expect(await tab.getByTestId("status").textContent()).toBe("Status: ready");

        await approve.click();
        await waitFor(tab, assistant.getByText("The command ran."), "the model's final text");
        expect(await tool.getAttribute("data-state")).toBe("output-available");
        expect(await tool.getByTestId("tool-output").textContent()).toContain("approved");
        // The continuation spoke on the message that asked: still one assistant message, same id.
        expect(await assistantMessages(tab).count()).toBe(1);
        expect(await assistantMessages(tab).first().getAttribute("data-message-id")).toBe(messageId);
        await waitFor(tab, tab.getByText("Status: ready"), "the chat to be ready");
        expect(await tab.getByTestId("error").count()).toBe(0);
        expect(chat.problems).toEqual([]);

        const sessionId = await sessionOf(ids.agentId);
        const events = await settledHistory(sessionId);
        const uses = ofType(events, "agent.tool_use");
        expect(uses).toHaveLength(1);
        expect(uses[0]).toMatchObject({ name: "bash", evaluated_permission: "ask" });
        expect(ofType(events, "user.tool_confirmation")).toMatchObject([
          { tool_use_id: uses[0]!.id, result: "allow" },
        ]);
        expect(ofType(events, "agent.tool_result")).toMatchObject([
          { tool_use_id: uses[0]!.id, is_error: false },
        ]);
        expect(textOf(ofType(events, "agent.message").at(-1))).toBe("The command ran.");
        // The tool ran exactly once: one line in the file it appends to.
        expect(readFileSync(join(t!.dataDir, "workspaces", sessionId, "proof.txt"), "utf8")).toBe(
          "approved\n",
        );
      } finally {
        await chat.close();
      }
    });

    it("Deny never runs the tool: the part is output-denied and the model's reply follows on it", async () => {
      const ids = await gatedAgent();
      fake!.enqueue(
        { kind: "tool_use", name: "bash", input: { command: "echo denied >> proof.txt" } },
        { kind: "text", text: "Understood, I will not run it." },
      );
      const chat = await chatAbout(ids, "run something");
      try {
        const { tab } = chat;
        const deny = tab.getByRole("button", { name: "Deny" });
        await waitFor(tab, deny, "the Deny button");
        const assistant = assistantMessages(tab).first();
        const messageId = await assistant.getAttribute("data-message-id");

        await deny.click();
        await waitFor(tab, assistant.getByText("Understood, I will not run it."), "the model's reply");
        const tool = assistant.getByTestId("tool-part");
        expect(await tool.getAttribute("data-state")).toBe("output-denied");
        expect(await tool.getByTestId("tool-output").count()).toBe(0);
        expect(await tab.getByRole("button", { name: "Approve" }).count()).toBe(0);
        expect(await assistantMessages(tab).count()).toBe(1);
        expect(await assistantMessages(tab).first().getAttribute("data-message-id")).toBe(messageId);
        await waitFor(tab, tab.getByText("Status: ready"), "the chat to be ready");
        expect(await tab.getByTestId("error").count()).toBe(0);
        expect(chat.problems).toEqual([]);

        const sessionId = await sessionOf(ids.agentId);
        const events = await settledHistory(sessionId);
        const uses = ofType(events, "agent.tool_use");
        expect(uses).toHaveLength(1);
        expect(ofType(events, "user.tool_confirmation")).toMatchObject([
          { tool_use_id: uses[0]!.id, result: "deny" },
        ]);
        expect(ofType(events, "agent.tool_result")).toMatchObject([
          { tool_use_id: uses[0]!.id, is_error: true },
        ]);
        expect(textOf(ofType(events, "agent.message").at(-1))).toBe("Understood, I will not run it.");
        expect(existsSync(join(t!.dataDir, "workspaces", sessionId, "proof.txt"))).toBe(false);
      } finally {
        await chat.close();
      }
    });
  });
});
