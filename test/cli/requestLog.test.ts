/**
 * The request log of a real `awaken up` process: `--log-level info` (over AWAKEN_LOG_LEVEL=warn)
 * turns on one JSON line per request that carries the response's request id, the route pattern, the
 * status, the duration and the caller's ids, and never a key, a bearer token or a body; failed
 * authentications are warn lines, one per source address per minute.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAwaken } from "../support/awakenCli.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const API_KEY = "sk-request-log-SECRET-4b7e1c";
const WRONG_KEY = "sk-wrong-key-SECRET-91d2aa";
const WRONG_BEARER = "bearer-token-SECRET-77c0f3";
const BODY_MARKER = "body-text-SECRET-5e8a";

let dir: string;
let p: ServerProcess;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "awaken-request-log-"));
  p = await startServerProcess({ dataDir: dir, apiKey: API_KEY, args: ["--log-level", "info"] });
});
afterAll(async () => {
  if (p && p.child.exitCode === null && p.child.signalCode === null) {
    p.child.kill("SIGTERM");
    await p.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

type Line = Record<string, unknown>;
const lines = (): Line[] =>
  p
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);

/** The request line of `requestId`, once the response's close has written it. */
async function lineOf(requestId: string | null): Promise<Line> {
  expect(requestId).toMatch(/^req_/);
  let found: Line | undefined;
  await expect
    .poll(() => {
      found = lines().find((l) => l.msg === "request" && l.reqId === requestId);
      return found !== undefined;
    })
    .toBe(true);
  return found!;
}

describe("request log", () => {
  it("writes one info line per request with its request id, route pattern, status, duration and caller", async () => {
    const created = await fetch(`${p.url}/v1/agents`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": API_KEY },
      body: JSON.stringify({ name: "logged", model: "claude-sonnet-4-5", system: BODY_MARKER }),
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const createdLine = await lineOf(created.headers.get("request-id"));
    expect(createdLine).toMatchObject({ level: 30, method: "POST", route: "/v1/agents", status: 200 });
    expect(createdLine.durationMs).toEqual(expect.any(Number));
    expect(createdLine.workspaceId).toEqual(expect.any(String));
    expect(createdLine.keyId).toEqual(expect.any(String));

    // A bearer credential, and a route with a parameter: the pattern is logged, not the URL.
    const read = await fetch(`${p.url}/v1/agents/${id}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(read.status).toBe(200);
    const readLine = await lineOf(read.headers.get("request-id"));
    expect(readLine).toMatchObject({ method: "GET", route: "/v1/agents/:id", status: 200 });
    expect(readLine.keyId).toBe(createdLine.keyId);
    expect(JSON.stringify(readLine)).not.toContain(id);
  });

  it("logs failed authentications at warn, at most one line per source a minute, and no secret anywhere", async () => {
    const ids: Array<string | null> = [];
    for (const headers of [
      { "x-api-key": WRONG_KEY },
      { authorization: `Bearer ${WRONG_BEARER}` },
      { "x-api-key": WRONG_KEY },
    ]) {
      const response = await fetch(`${p.url}/v1/agents`, { headers });
      expect(response.status).toBe(401);
      ids.push(response.headers.get("request-id"));
    }
    for (const requestId of ids) {
      const line = await lineOf(requestId);
      expect(line).toMatchObject({ level: 30, status: 401, route: "/v1/agents" });
      expect(line.keyId).toBeUndefined();
    }
    const warns = lines().filter((l) => l.msg === "authentication failed");
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ level: 40, route: "/v1/agents", method: "GET", source: "127.0.0.1" });

    const log = p.stderr();
    for (const secret of [API_KEY, WRONG_KEY, WRONG_BEARER, BODY_MARKER]) expect(log).not.toContain(secret);
  });
});

describe("--log-level", () => {
  // Each is a process start on a shared machine: one at a time, with room for a slow start.
  it.each([["up"], ["worker"], ["control"], ["coordinator"]])(
    "is an option of `awaken %s`",
    { timeout: 60_000 },
    async (command) => {
      const help = await runAwaken([command, "--help"]);
      expect(help.stdout).toMatch(/--log-level <level>/);
    },
  );

  it("refuses a level pino does not know", { timeout: 60_000 }, async () => {
    const refused = await runAwaken(["up", "--log-level", "loud", "--data-dir", join(dir, "never")]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /--log-level.*loud.*Allowed choices are trace, debug, info, warn, error, fatal, silent/s,
    );
  });
});
