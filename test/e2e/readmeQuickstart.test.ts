import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const QUICKSTART = `${ROOT}examples/quickstart.mjs`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe("the README's quickstart", () => {
  it("is the example file, word for word", () => {
    const readme = readFileSync(`${ROOT}README.md`, "utf8");
    expect(readme).toContain(readFileSync(QUICKSTART, "utf8").trim());
  });

  it("runs against the server: the custom tool is answered and the turn ends", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [QUICKSTART], {
      env: { PATH: process.env.PATH, AWAKEN_URL: t.server.url, AWAKEN_API_KEY: TEST_API_KEY },
      timeout: 20_000,
    });
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe("answered get_weather");
    expect(lines).toContain("agent.custom_tool_use");
    expect(lines).toContain("user.custom_tool_result");
    expect(lines.at(-1)).toBe("session.status_idle");
  });
});
