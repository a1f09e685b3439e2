/**
 * The README's quickstarts for the AI SDK, AG-UI, A2A and MCP are the example files, word for word, and they
 * run against the server: one turn each, then the conversation read back from committed history.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLES = {
  "AI SDK": `${ROOT}examples/aiSdkQuickstart.mjs`,
  "AG-UI": `${ROOT}examples/agUiQuickstart.mjs`,
  A2A: `${ROOT}examples/a2aQuickstart.mjs`,
  MCP: `${ROOT}examples/mcpQuickstart.mjs`,
};

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const run = async (file: string) => {
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    env: {
      PATH: process.env.PATH,
      AWAKEN_URL: t.server.url,
      AWAKEN_API_KEY: TEST_API_KEY,
      SUPPRESS_TRANSFORMATION_WARNINGS: "1",
    },
    timeout: 20_000,
  });
  return stdout.trim().split("\n");
};

describe("the README's protocol quickstarts", () => {
  it.each(Object.entries(EXAMPLES))("the %s one is the example file, word for word", (_name, file) => {
    const readme = readFileSync(`${ROOT}README.md`, "utf8");
    expect(readme).toContain(readFileSync(file, "utf8").trim());
  });

  it("the AI SDK one streams the answer and reads the chat back from history", async () => {
    const lines = await run(EXAMPLES["AI SDK"]);
    expect(lines[0]).toBe("assistant: [offline model] You said: Hello from the AI SDK");
    expect(lines.slice(1)).toEqual(["user text", "assistant step-start,text"]);
  });

  it("the AG-UI one runs twice on one thread; the second client gets the history in order", async () => {
    const lines = await run(EXAMPLES["AG-UI"]);
    expect(lines[0]).toBe("assistant: [offline model] You said: Hello from AG-UI");
    expect(lines.slice(1)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("the A2A one streams a task, reads it back, and continues its context in the same session", async () => {
    const lines = await run(EXAMPLES.A2A);
    expect(lines[0]).toBe("assistant: [offline model] You said: Hello from A2A");
    expect(lines.slice(1)).toEqual(["user.message", "agent.message", "user.message", "agent.message"]);
  });

  it("the MCP one calls the agent's tool twice in one session, then reads it over the Managed API", async () => {
    const lines = await run(EXAMPLES.MCP);
    expect(lines).toEqual([
      "assistant: [offline model] You said: Hello from MCP",
      "stop_reason: end_turn",
      "user.message",
      "agent.message",
      "user.message",
      "agent.message",
    ]);
  });
});
