import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { environmentKeysCommand } from "../../src/cli/environmentKeysCommand.js";
import { clientAs } from "../support/selfHosted.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// `awaken environment-keys` against a running server: the built binary for its help, the same
// command in-process for what it does.
const BIN = fileURLToPath(new URL("../../bin/awaken.js", import.meta.url));
const run = promisify(execFile);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workers: 0 });
});
afterAll(async () => {
  await t.close();
});

/** The real binary: proves the command is registered and its help is complete (one spawn, ~1 s). */
async function keysBinary(args: string[]) {
  return run(process.execPath, [BIN, "environment-keys", ...args], { env: { PATH: process.env.PATH } });
}

/**
 * The same command in-process (spawning the CLI costs a second per call): what it prints on
 * stdout and stderr, or the error `awaken` would print and exit 1 with.
 */
async function keys(args: string[], apiKey: string | null = TEST_API_KEY) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  const saved = process.env.AWAKEN_API_KEY;
  if (apiKey === null) delete process.env.AWAKEN_API_KEY;
  else process.env.AWAKEN_API_KEY = apiKey;
  try {
    await environmentKeysCommand().parseAsync(args, { from: "user" });
    return { stdout: out.join(""), stderr: err.join("") };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    if (saved === undefined) delete process.env.AWAKEN_API_KEY;
    else process.env.AWAKEN_API_KEY = saved;
  }
}

describe("awaken environment-keys", () => {
  it("--help explains what the keys are, the endpoints and the API key it needs", async () => {
    const { stdout } = await keysBinary(["--help"]);
    for (const text of [
      "self_hosted",
      "AWAKEN_API_KEY",
      "/v1/awaken/environments/{id}/keys",
      "create",
      "revoke",
    ]) {
      expect(stdout).toContain(text);
    }
  });

  it("creates a key (printed alone, once), lists it without the secret and revokes it", async () => {
    const env = await t.client.beta.environments.create({ name: "cli", config: { type: "self_hosted" } });
    const common = ["--url", t.server.url, "--environment", env.id];
    const created = await keys(["create", ...common, "--name", "rack-7"]);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sk-awaken-env-[A-Za-z0-9_-]+$/);
    expect(created.stderr).toContain("shown only once");
    expect(await clientAs(t, key).beta.environments.work.poll(env.id)).toBeNull();

    const listed = await keys(["list", ...common, "--json"]);
    const [entry] = JSON.parse(listed.stdout) as Array<{
      id: string;
      name: string;
      revoked_at: string | null;
    }>;
    expect(entry).toMatchObject({ name: "rack-7", revoked_at: null });
    expect(listed.stdout).not.toContain(key);

    const revoked = await keys(["revoke", entry!.id, ...common]);
    expect(revoked.stdout).toContain(`revoked ${entry!.id}`);
    await expect(clientAs(t, key).beta.environments.work.poll(env.id)).rejects.toMatchObject({ status: 401 });
    expect((await keys(["list", ...common])).stdout).toContain("revoked");
  });

  it("fails with the server's message, and without AWAKEN_API_KEY before calling anything", async () => {
    const cloud = await t.client.beta.environments.create({ name: "cloud" });
    await expect(keys(["create", "--url", t.server.url, "--environment", cloud.id])).rejects.toThrow(
      /^400 from http:.*only self_hosted environments have environment keys/,
    );
    await expect(keys(["list", "--url", t.server.url, "--environment", cloud.id], null)).rejects.toThrow(
      "AWAKEN_API_KEY is not set",
    );
  });
});
