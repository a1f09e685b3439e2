/**
 * A remote worker's host is out of the erasure's reach while it runs: the answer counts the
 * session's workspace as not reached, and the worker deletes it when it next claims the session,
 * before any tool runs, so the erased content never comes back into the history. Spawns the built
 * `awaken worker` (run `npx tsc -p tsconfig.build.json` after changing src/).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { history, isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const TOKEN = "erasure-remote-worker-token-0123456789";
const SUBJECT = "user-frank";

describe("erasure of a session a remote worker holds", () => {
  let t: TestServer;
  let worker: WorkerProcess;
  let workerDir: string;
  beforeAll(async () => {
    t = await startTestServer({ workers: 0, workerToken: TOKEN, workerPollMs: 50, allowWeakerTiers: true });
    workerDir = mkdtempSync(join(tmpdir(), "awaken-remote-ws-"));
    worker = await startWorker(t.server.url, TOKEN, {}, [
      "--workspace-dir",
      workerDir,
      "--allow-unsandboxed-tier",
    ]);
  }, 30_000);
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill("SIGTERM");
      await worker.exited;
    }
    await t?.close();
    if (workerDir) rmSync(workerDir, { recursive: true, force: true });
  });

  async function call(sessionId: string, tool: string, input: Record<string, unknown>) {
    const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
    await t.client.beta.sessions.events.send(sessionId, {
      events: [userMessage(`call ${tool} ${JSON.stringify(input)}`)],
    });
    const events = await waitForHistory(
      t.client,
      sessionId,
      (h) => h.filter(isEndTurnIdle).length > before,
      20_000,
    );
    const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
    return { text: textOf(result), isError: result?.is_error === true };
  }

  it("answers that it could not reach the workspace, and the worker deletes it at its next claim", async () => {
    const planted = `planted-remote-${randomBytes(8).toString("hex")}`;
    const agent = await t.client.beta.agents.create({
      name: "remote-erasure",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const environment = await t.client.beta.environments.create({
      name: "remote-erasure",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    const s = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      metadata: { awaken_data_subject: SUBJECT },
    });
    expect(await call(s.id, "write", { file_path: "notes.txt", content: planted })).toMatchObject({
      isError: false,
    });
    const file = join(workerDir, s.id, "notes.txt");
    expect(readFileSync(file, "utf8")).toBe(planted);

    const response = await fetch(`${t.server.url}/v1/awaken/data_subjects/${SUBJECT}/erasure`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    const receipt = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(receipt)).toBe(200);
    expect(receipt).toMatchObject({ removed: true, workspaces: { removed: 0, failed: 0, not_reached: 1 } });

    // The next claim tells the worker: the old workspace goes before the tool runs.
    const reread = await call(s.id, "read", { file_path: "notes.txt" });
    expect(reread.isError).toBe(true);
    expect(reread.text).not.toContain(planted);
    expect(existsSync(file)).toBe(false);
    expect(JSON.stringify(await history(t.client, s.id))).not.toContain(planted);
    // What the session writes after the erasure stays.
    expect(await call(s.id, "write", { file_path: "after.txt", content: "kept" })).toMatchObject({
      isError: false,
    });
    expect(await call(s.id, "read", { file_path: "after.txt" })).toMatchObject({ isError: false });
    expect(readFileSync(join(workerDir, s.id, "after.txt"), "utf8")).toBe("kept");
  }, 60_000);
});
