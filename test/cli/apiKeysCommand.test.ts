import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Anthropic, { PermissionDeniedError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiKeysCommand } from "../../src/cli/apiKeysCommand.js";
import { MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// `awaken api-keys` against a running server: the built binary for its help, the command
// in-process for what it does (spawning costs a second per call).
const BIN = fileURLToPath(new URL("../../bin/awaken.js", import.meta.url));
const run = promisify(execFile);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workers: 0 });
});
afterAll(() => t.close());

async function apiKeys(args: string[], apiKey = TEST_API_KEY) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  const saved = process.env.AWAKEN_API_KEY;
  process.env.AWAKEN_API_KEY = apiKey;
  try {
    await apiKeysCommand().parseAsync([...args, "--url", t.server.url], { from: "user" });
    return { stdout: out.join(""), stderr: err.join("") };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    if (saved === undefined) delete process.env.AWAKEN_API_KEY;
    else process.env.AWAKEN_API_KEY = saved;
  }
}

describe("awaken api-keys", () => {
  it("--help names the roles, the routes and the variables", async () => {
    const { stdout } = await run(process.execPath, [BIN, "api-keys", "--help"], {
      env: { PATH: process.env.PATH },
    });
    for (const text of ["runtime", "builder", "admin", "/v1/awaken/api_keys", "AWAKEN_API_KEY", "AWAKEN_URL"])
      expect(stdout).toContain(text);
  });

  it("create prints the key alone on stdout; it works with its role; list shows it without the key; revoke ends it", async () => {
    const created = await apiKeys(["create", "--role", "runtime", "--label", "cli app"]);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sk-awaken-\S+$/);
    expect(created.stderr).toMatch(
      /Created key_\S+ \(runtime, wrkspc_default\)\. The key below is shown only once/,
    );
    const client = new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });
    await client.models.list();
    await expect(client.beta.agents.create({ name: "x", model: MODEL })).rejects.toBeInstanceOf(
      PermissionDeniedError,
    );

    const listed = await apiKeys(["list"]);
    const line = listed.stdout.split("\n").find((l) => l.includes('"cli app"'))!;
    expect(line).toMatch(/^key_\S+ {2}runtime {2}wrkspc_default {2}"cli app" {2}created \S+ {2}active$/);
    expect(listed.stdout).not.toContain(key);
    const id = line.split(" ")[0]!;
    expect((await apiKeys(["revoke", id])).stdout).toMatch(
      new RegExp(`^revoked ${id} \\(runtime\\) at \\S+`),
    );
    await expect(client.models.list()).rejects.toThrow(/401/);
  });

  it("--agents limits a runtime key to those agents; list shows them", async () => {
    const admin = new Anthropic({ apiKey: TEST_API_KEY, baseURL: t.server.url, maxRetries: 0 });
    const a = await admin.beta.agents.create({ name: "a", model: MODEL });
    const b = await admin.beta.agents.create({ name: "b", model: MODEL });
    const created = await apiKeys([
      "create",
      "--role",
      "runtime",
      "--agents",
      `${a.id},${b.id}`,
      "--label",
      "two",
    ]);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sk-awaken-\S+$/);
    const line = (await apiKeys(["list"])).stdout.split("\n").find((l) => l.includes('"two"'))!;
    expect(line).toMatch(new RegExp(`active {2}agents ${a.id},${b.id}$`));
    await expect(apiKeys(["create", "--role", "builder", "--agents", a.id])).rejects.toThrow(
      /400 from .*only a runtime key carries an agent allow-list/,
    );
  });

  it("a refusal is the server's message; an unknown role never reaches the server", async () => {
    const runtime = (await apiKeys(["create", "--role", "runtime"])).stdout.trim();
    await expect(apiKeys(["list"], runtime)).rejects.toThrow(
      /403 from .*needs an admin key; this key's role is runtime/,
    );
    await expect(
      run(process.execPath, [BIN, "api-keys", "create", "--role", "root"], {
        env: { PATH: process.env.PATH },
      }),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(
        /argument 'root' is invalid. Allowed choices are runtime, builder, admin/,
      ),
    });
  });
});
