/**
 * The built `awaken up` as a child process with a scripted Anthropic model, for the Console's
 * browser tests: the page is served by the server itself, so the test sees what an operator sees.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { startFakeAnthropic } from "./fakeAnthropicServer.js";
import type { FakeModelServer } from "./fakeModelScript.js";
import { startServerProcess } from "./serverProcess.js";

export const CONSOLE_API_KEY = "sk-awaken-console-test-key";

export interface ConsoleServer {
  url: string;
  client: Anthropic;
  fake: FakeModelServer;
  close(): Promise<void>;
}

export async function startConsoleServer(): Promise<ConsoleServer> {
  const fake = await startFakeAnthropic();
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-console-"));
  try {
    const server = await startServerProcess({
      dataDir,
      apiKey: CONSOLE_API_KEY,
      env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
      // The approval tests run bash on tier "none": the operator option enables it. The custody
      // test validates a credential against a loopback port nothing listens on.
      args: ["--allow-unsandboxed-tier", "--workers", "4", "--allow-private-mcp-host", "127.0.0.1"],
    });
    return {
      url: server.url,
      client: server.client,
      fake,
      close: async () => {
        server.child.kill("SIGTERM");
        await server.exited;
        await fake.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
