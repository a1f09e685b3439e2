/**
 * An erasure reaches the files the subject's sessions left in their sandbox workspaces, not only
 * the database: the agent wrote the subject's content into a file through the `write` Hand tool;
 * after the erasure the file is gone from the host, a later turn cannot read it back into the
 * history, and the answer says how many workspaces it removed and how many it could not reach.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import {
  history,
  isEndTurnIdle,
  MODEL,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const hasBwrap = await bwrapAvailable();
const SUBJECT = "user-carol_7";

/** Files under `dir` whose bytes hold `needle` (the SQLite database's own files aside: see docs). */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) continue;
    if (info.isDirectory()) found.push(...filesHolding(path, needle));
    else if (info.isFile() && !name.startsWith("awaken.db") && readFileSync(path).includes(needle))
      found.push(path);
  }
  return found;
}

async function erase(t: TestServer, subject: string) {
  const response = await fetch(`${t.server.url}/v1/awaken/data_subjects/${subject}/erasure`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}` },
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe.each([
  ["none", true],
  ["bwrap", hasBwrap],
] as const)("erasure of a subject's workspace files (tier %s)", (tier, available) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ workerPollMs: 50, allowWeakerTiers: true });
  });
  afterAll(() => t?.close());

  async function session(client: Anthropic, subject: string) {
    const agent = await client.beta.agents.create({
      name: "erasure-files",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const environment = await client.beta.environments.create({
      name: "erasure-files",
      config: { type: "cloud", sandbox: { tier } } as never,
    });
    return client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      metadata: { awaken_data_subject: subject },
    });
  }

  async function call(sessionId: string, tool: string, input: Record<string, unknown>) {
    const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
    await t.client.beta.sessions.events.send(sessionId, {
      events: [userMessage(`call ${tool} ${JSON.stringify(input)}`)],
    });
    const events: WireEvent[] = await waitForHistory(
      t.client,
      sessionId,
      (h) => h.filter(isEndTurnIdle).length > before,
      15_000,
    );
    const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
    return { text: textOf(result), isError: result?.is_error === true };
  }

  it.skipIf(!available)(
    "deletes the workspace the agent wrote the subject's content into; a later turn cannot read it back",
    async () => {
      const planted = `planted-file-${randomBytes(8).toString("hex")}`;
      const s = await session(t.client, SUBJECT);
      const idle = await session(t.client, SUBJECT); // no tool ever ran: no workspace
      const other = await session(t.client, "user-dave");
      expect(await call(s.id, "write", { file_path: "notes/subject.txt", content: planted })).toMatchObject({
        isError: false,
      });
      await call(other.id, "write", { file_path: "keep.txt", content: "not this subject's" });
      const workspaces = join(t.dataDir, "workspaces");
      expect(filesHolding(workspaces, planted)).toEqual([join(workspaces, s.id, "notes", "subject.txt")]);
      expect((await call(s.id, "read", { file_path: "notes/subject.txt" })).text).toContain(planted);

      const receipt = await erase(t, SUBJECT);
      expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
      expect(receipt.json).toMatchObject({
        removed: true,
        counts: { sessions: 2 },
        workspaces: { removed: 1, failed: 0, not_reached: 0 },
        vacuum: "not_applicable",
      });
      // Not on the host any more, in any file of the data dir; the other subject's workspace stays.
      expect(existsSync(join(workspaces, s.id))).toBe(false);
      expect(existsSync(join(workspaces, idle.id))).toBe(false);
      expect(filesHolding(t.dataDir, planted)).toEqual([]);
      expect(readFileSync(join(workspaces, other.id, "keep.txt"), "utf8")).toBe("not this subject's");
      // A repeat finds nothing left to delete.
      expect((await erase(t, SUBJECT)).json).toMatchObject({
        removed: false,
        workspaces: { removed: 0, failed: 0, not_reached: 0 },
        vacuum: "not_needed",
      });

      // The session goes on over an empty workspace: nothing comes back into its history.
      const reread = await call(s.id, "read", { file_path: "notes/subject.txt" });
      expect(reread.isError).toBe(true);
      expect(reread.text).not.toContain(planted);
      expect(JSON.stringify(await history(t.client, s.id))).not.toContain(planted);
      expect(await call(s.id, "bash", { command: "ls -A | wc -l" })).toEqual({
        text: "0\n[exit code: 0]",
        isError: false,
      });
    },
    60_000,
  );
});

describe("erasure on a server that serves remote workers", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ workerPollMs: 50, workers: 0, workerToken: "w".repeat(40) });
  });
  afterAll(() => t?.close());

  it("says how many erased sessions' workspaces it could not reach", async () => {
    const agent = await t.client.beta.agents.create({ name: "remote", model: MODEL });
    const environment = await t.client.beta.environments.create({ name: "remote" });
    for (let i = 0; i < 2; i++) {
      await t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        metadata: { awaken_data_subject: SUBJECT },
      });
    }
    const receipt = await erase(t, SUBJECT);
    expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
    expect(receipt.json).toMatchObject({
      counts: { sessions: 2 },
      workspaces: { removed: 0, failed: 0, not_reached: 2 },
    });
  });
});
