/**
 * One Console tab in headless chromium: what the operator's devtools would show (console errors,
 * uncaught exceptions) and every dialog the page opened, so a test can assert that hostile content
 * ran nothing (no alert) while the confirmations it expects were asked.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { CONSOLE_API_KEY } from "../support/consoleServer.js";

export interface ConsoleTab {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions. */
  problems: string[];
  /** Dialogs as `type: message`; confirms are answered by `answerConfirms` (accept unless told). */
  dialogs: string[];
  /** Whether the next confirm dialogs are accepted (true) or dismissed (false). */
  answerConfirms: boolean;
}

export async function openConsoleTab(browser: Browser, url: string): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const tab: ConsoleTab = { page, context, problems: [], dialogs: [], answerConfirms: true };
  page.on("console", (message) => {
    if (message.type() === "error") tab.problems.push(message.text());
  });
  page.on("pageerror", (error) => tab.problems.push(String(error)));
  page.on("dialog", (dialog) => {
    tab.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void (dialog.type() === "confirm" && tab.answerConfirms ? dialog.accept() : dialog.dismiss());
  });
  await page.goto(`${url}/console/sessions`);
  await page.getByLabel("API key").fill(CONSOLE_API_KEY);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  return tab;
}

/** Closes the tab (a screenshot first when named) and fails on any error or non-confirm dialog it saw. */
export async function closeConsoleTab(tab: ConsoleTab, shot?: string): Promise<void> {
  if (shot) await tab.page.screenshot({ path: shot, fullPage: true });
  await tab.context.close();
  expect(tab.problems).toEqual([]);
  expect(tab.dialogs.filter((dialog) => !dialog.startsWith("confirm: "))).toEqual([]);
}

/** What markup hostile text would have become, had it been injected: none may be in the page. */
export async function injectedElements(page: Page): Promise<number> {
  return page.locator("main img, main script, main b, main iframe").count();
}
