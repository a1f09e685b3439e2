/**
 * The operator's bound on session workspaces per tenant, through the API: a session past it gets a
 * tool error that says why and what to do (the model reads it), never a failed run, and deleting a
 * session frees its place.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { history, isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({
    workerPollMs: 50,
    allowWeakerTiers: true,
    env: { AWAKEN_SANDBOX_WORKSPACES_PER_TENANT: "1" },
  });
});
afterAll(() => t?.close());

async function session() {
  const agent = await t.client.beta.agents.create({
    name: "tenant-bound",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }] as never,
  });
  const environment = await t.client.beta.environments.create({
    name: "tenant-bound",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

async function bash(sessionId: string, command: string) {
  const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
  await t.client.beta.sessions.events.send(sessionId, {
    events: [userMessage(`call bash ${JSON.stringify({ command })}`)],
  });
  const events = await waitForHistory(
    t.client,
    sessionId,
    (h) => h.filter(isEndTurnIdle).length > before,
    15_000,
  );
  const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
  return { text: textOf(result), isError: result?.is_error === true };
}

describe("session workspaces per tenant", () => {
  it("refuses a tenant's workspace past the operator's bound with a tool error; a deleted session frees it", async () => {
    const first = await session();
    const second = await session();
    expect(await bash(first.id, "echo one")).toMatchObject({ isError: false });
    const refused = await bash(second.id, "echo two");
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(
      /the sandbox for this session could not be started: this workspace already has 1 sessions with a sandbox workspace on this worker, the most it may have: delete sessions that are done/,
    );
    // The first session's workspace keeps serving.
    expect(await bash(first.id, "echo again")).toMatchObject({ isError: false });
    await t.client.beta.sessions.delete(first.id);
    expect(await bash(second.id, "echo two")).toMatchObject({ isError: false });
  });
});
