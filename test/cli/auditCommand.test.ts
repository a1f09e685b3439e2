import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { auditCommand } from "../../src/cli/auditCommand.js";
import { MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// `awaken audit` against a running server: the built binary for its help, the command in-process
// for what it does (spawning costs a second per call).
const BIN = fileURLToPath(new URL("../../bin/awaken.js", import.meta.url));
const run = promisify(execFile);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workers: 0 });
});
afterAll(() => t.close());

async function audit(args: string[], apiKey = TEST_API_KEY) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  const saved = process.env.AWAKEN_API_KEY;
  process.env.AWAKEN_API_KEY = apiKey;
  try {
    await auditCommand()
      .exitOverride()
      .parseAsync([...args, "--url", t.server.url], { from: "user" });
    return { stdout: out.join(""), stderr: err.join("") };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    if (saved === undefined) delete process.env.AWAKEN_API_KEY;
    else process.env.AWAKEN_API_KEY = saved;
  }
}

describe("awaken audit", () => {
  it("--help says what is recorded, who the actors are, the route and the variables", async () => {
    const { stdout } = await run(process.execPath, [BIN, "audit", "--help"], {
      env: { PATH: process.env.PATH },
    });
    for (const text of [
      "--resource-type",
      "--resource-id",
      "--action",
      "--json",
      "bootstrap",
      "system",
      "rotate",
      "GET /v1/awaken/audit",
      "AWAKEN_API_KEY",
      "AWAKEN_URL",
      "No entry holds a secret",
    ])
      expect(stdout).toContain(text);
  });

  it("prints the changes as a table, newest first; --json, filters and pages", async () => {
    const client = new Anthropic({ apiKey: TEST_API_KEY, baseURL: t.server.url, maxRetries: 0 });
    const agent = await client.beta.agents.create({ name: "cli-audited", model: MODEL });
    await client.beta.agents.update(agent.id, { version: agent.version, system: "v2" });
    const vault = await client.beta.vaults.create({ display_name: "cli-vault" });

    const table = await audit([]);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+ACTOR\s+ACTION\s+RESOURCE\s+REV\s+BEFORE\s+AFTER$/);
    expect(lines[1]).toMatch(
      new RegExp(`key_\\S+\\s+create\\s+vault ${vault.id}\\s+-\\s+-\\s+[0-9a-f]{12}$`),
    );
    expect(lines[2]).toMatch(new RegExp(`update\\s+agent ${agent.id}\\s+2\\s+[0-9a-f]{12}\\s+[0-9a-f]{12}$`));
    expect(table.stdout).toMatch(/bootstrap\s+create\s+workspace wrkspc_default/);

    const json = JSON.parse((await audit(["--resource-id", agent.id, "--json"])).stdout) as {
      data: { action: string; resource_id: string; revision: number }[];
      next_page: string | null;
    };
    expect(json.data.map((e) => [e.action, e.revision])).toEqual([
      ["update", 2],
      ["create", 1],
    ]);
    expect(json.next_page).toBeNull();

    const filtered = await audit(["--resource-type", "vault", "--action", "create"]);
    expect(filtered.stdout.trim().split("\n")).toHaveLength(2);

    const first = await audit(["--limit", "1"]);
    expect(first.stdout.trim().split("\n")).toHaveLength(2);
    const cursor = /--page (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const second = await audit(["--limit", "1", "--page", cursor!]);
    expect(second.stdout).toContain(`agent ${agent.id}`);
    const all = await audit(["--all", "--limit", "1"]);
    expect(all.stdout.trim().split("\n").length).toBe(table.stdout.trim().split("\n").length);
    expect(all.stderr).toBe("");
  });

  it("refuses a bad filter before calling, and says why the server refused", async () => {
    await expect(audit(["--resource-type", "bogus"])).rejects.toThrow(/Allowed choices are/);
    await expect(audit(["--limit", "0"])).rejects.toThrow(/1 to 100/);
    const { stdout } = await audit(["--json"]);
    expect(JSON.parse(stdout).data.length).toBeGreaterThan(0);
    const builderKey = (
      (await (
        await fetch(`${t.server.url}/v1/awaken/api_keys`, {
          method: "POST",
          headers: { "x-api-key": TEST_API_KEY, "content-type": "application/json" },
          body: JSON.stringify({ role: "builder" }),
        })
      ).json()) as { key: string }
    ).key;
    await expect(audit([], builderKey)).rejects.toThrow(/403 from .*admin/);
    await expect(audit(["--page", "not-a-cursor"])).rejects.toThrow(/400 from .*cursor/);
  });
});
