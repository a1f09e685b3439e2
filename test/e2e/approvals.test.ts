/**
 * The permission gate and confirmations (wire §3.4 cases 4–5), through the official SDK
 * against a scripted model on the real Anthropic streaming wire: every built-in tool call passes the
 * gate; `ask` parks the run with its ticket committed before anyone sees the request; answers are
 * validated, idempotent and echoed; deny never runs the tool.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  BAD_REQUEST,
  history,
  isActionIdle,
  isEndTurnIdle,
  MODEL,
  stopReason,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    // Its environments run tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "done" });
});

type Policy = {
  type: "always_allow" | "always_ask" | "auto";
  rules?: Array<{ effect: string; match?: string }>;
};

async function session(bashPolicy: Policy, extraTools: Array<Record<string, unknown>> = []) {
  const agent = await t.client.beta.agents.create({
    name: "gated",
    model: MODEL,
    tools: [
      {
        type: "agent_toolset_20260401",
        configs: [{ name: "bash", permission_policy: bashPolicy }],
      },
      ...extraTools,
    ] as never,
  });
  const environment = await t.client.beta.environments.create({
    name: "gated",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

const workspace = (sessionId: string) => join(t.dataDir, "workspaces", sessionId);
const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);

async function askOnce(sessionId: string, command: string): Promise<{ events: WireEvent[]; useId: string }> {
  fake.enqueue({ kind: "tool_use", name: "bash", input: { command } });
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage("go")] });
  const events = await waitForHistory(t.client, sessionId, (h) => h.some(isActionIdle));
  const use = ofType(events, "agent.tool_use").at(-1);
  return { events, useId: use!.id };
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ status: number; type: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { status: number; error: { error: { type: string; message: string } } };
    return { status: e.status, type: e.error.error.type, message: e.error.error.message };
  }
  throw new Error("expected the request to fail");
}

describe("always_ask: the run parks on a confirmation", () => {
  it("allow runs the tool on the server and the run continues", async () => {
    const s = await session({ type: "always_ask" });
    const { events, useId } = await askOnce(s.id, "echo approved > proof.txt");
    const use = ofType(events, "agent.tool_use")[0];
    expect(use).toMatchObject({ evaluated_permission: "ask", evaluation: { type: "always_ask" } });
    expect(stopReason(events.at(-1))).toEqual({ type: "requires_action", event_ids: [useId] });
    // Parked: nothing ran yet.
    expect(existsSync(join(workspace(s.id), "proof.txt"))).toBe(false);
    expect((await t.client.beta.sessions.retrieve(s.id)).status).toBe("idle");

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: useId, result: "allow" }],
    });
    const after = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(after, "user.tool_confirmation")).toMatchObject([{ tool_use_id: useId, result: "allow" }]);
    const result = ofType(after, "agent.tool_result")[0];
    expect(result).toMatchObject({ tool_use_id: useId, is_error: false });
    expect(existsSync(join(workspace(s.id), "proof.txt"))).toBe(true);
    expect(textOf(ofType(after, "agent.message").at(-1))).toBe("done");
  });

  it("deny never runs the tool; the model gets the denial with the user's message", async () => {
    const s = await session({ type: "always_ask" });
    const { useId } = await askOnce(s.id, "echo nope > proof.txt");
    await t.client.beta.sessions.events.send(s.id, {
      events: [
        { type: "user.tool_confirmation", tool_use_id: useId, result: "deny", deny_message: "not today" },
      ],
    });
    const after = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    const result = ofType(after, "agent.tool_result")[0];
    expect(result).toMatchObject({ tool_use_id: useId, is_error: true });
    expect(textOf(result)).toContain("not today");
    expect(existsSync(join(workspace(s.id), "proof.txt"))).toBe(false);
    // The model saw the denial as the call's result.
    const lastRequest = fake.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(lastRequest.messages.at(-1)?.content)).toContain("not today");
  });

  it("answers are validated: twice, unknown id, wrong kind → 400 and nothing changes", async () => {
    const s = await session({ type: "always_ask" });
    const { useId } = await askOnce(s.id, "true");
    const before = await history(t.client, s.id);

    const unknown = await rejection(
      t.client.beta.sessions.events.send(s.id, {
        events: [{ type: "user.tool_confirmation", tool_use_id: "sevt_unknown", result: "allow" }],
      }),
    );
    expect(unknown).toMatchObject(BAD_REQUEST);
    expect(unknown.message).toMatch(/not waiting for a confirmation/);
    // A result is not a confirmation: the cloud server runs the tool itself.
    const wrongKind = await rejection(
      t.client.beta.sessions.events.send(s.id, {
        events: [{ type: "user.tool_result", tool_use_id: useId, content: [{ type: "text", text: "x" }] }],
      }),
    );
    expect(wrongKind).toMatchObject(BAD_REQUEST);
    expect(await history(t.client, s.id)).toEqual(before);

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: useId, result: "allow" }],
    });
    const twice = await rejection(
      t.client.beta.sessions.events.send(s.id, {
        events: [{ type: "user.tool_confirmation", tool_use_id: useId, result: "deny" }],
      }),
    );
    expect(twice).toMatchObject(BAD_REQUEST);
    const after = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(after, "user.tool_confirmation")).toHaveLength(1);
    expect(ofType(after, "agent.tool_result")).toHaveLength(1);
  });

  it("partial answers re-emit the idle with the ids still pending; the run resumes only when all are answered", async () => {
    const s = await session({ type: "always_ask" }, [
      { type: "custom", name: "lookup", description: "look up", input_schema: { type: "object" } },
    ]);
    fake.enqueue({
      kind: "tool_use",
      name: "bash",
      input: { command: "echo one >> log.txt" },
      more: [
        { name: "bash", input: { command: "echo two >> log.txt" } },
        { name: "lookup", input: { q: "x" } },
      ],
    });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const parked = await waitForHistory(t.client, s.id, (h) => h.some(isActionIdle));
    const [first, second] = ofType(parked, "agent.tool_use").map((e) => e.id);
    const custom = ofType(parked, "agent.custom_tool_use")[0]!.id;
    expect(stopReason(parked.at(-1))?.event_ids).toEqual([first, second, custom]);

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: second!, result: "deny" }],
    });
    let events = await history(t.client, s.id);
    expect(stopReason(events.at(-1))?.event_ids).toEqual([first, custom]);
    await t.client.beta.sessions.events.send(s.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: custom,
          content: [{ type: "text", text: "42" }],
        },
      ],
    });
    events = await history(t.client, s.id);
    expect(stopReason(events.at(-1))?.event_ids).toEqual([first]);
    expect(ofType(events, "agent.tool_result").map((e) => e.tool_use_id)).toEqual([second]);
    expect((await t.client.beta.sessions.retrieve(s.id)).status).toBe("idle");

    await t.client.beta.sessions.events.send(s.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: first!, result: "allow" }],
    });
    events = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    // Only the allowed call ran; the model got all three results in one follow-up request.
    expect(readFileSync(join(workspace(s.id), "log.txt"), "utf8")).toBe("one\n");
    const followUp = fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const results = ((followUp.messages.at(-1)?.content ?? []) as Array<{ type: string }>).filter(
      (b) => b.type === "tool_result",
    );
    expect(results).toHaveLength(3);
  });

  it("an interrupt while awaiting ends the run; the pending call is answered as interrupted for the model", async () => {
    const s = await session({ type: "always_ask" });
    const { useId } = await askOnce(s.id, "echo never > proof.txt");
    await t.client.beta.sessions.events.send(s.id, { events: [{ type: "user.interrupt" }] });
    const stale = await rejection(
      t.client.beta.sessions.events.send(s.id, {
        events: [{ type: "user.tool_confirmation", tool_use_id: useId, result: "allow" }],
      }),
    );
    expect(stale).toMatchObject(BAD_REQUEST);
    expect((await t.client.beta.sessions.retrieve(s.id)).status).toBe("idle");
    // The next turn works and the model sees the interrupted call closed.
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("next")] });
    await waitForHistory(t.client, s.id, (h) => h.filter(isEndTurnIdle).length >= 2);
    const request = fake.requests.at(-1)?.body as { messages: unknown };
    expect(JSON.stringify(request.messages)).toContain("interrupted");
    expect(existsSync(join(workspace(s.id), "proof.txt"))).toBe(false);
  });
});

describe("auto: operator rules (deny > allow > ask)", () => {
  const rules: Policy = {
    type: "auto",
    rules: [
      { effect: "ask", match: "*" },
      { effect: "allow", match: "echo *" },
      { effect: "deny", match: "*rm -rf*" },
    ],
  };

  it("a matching deny refuses without asking anyone; the model is told why", async () => {
    const s = await session(rules);
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo hi && rm -rf /" } });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(events, "agent.tool_use")[0]).toMatchObject({
      evaluated_permission: "deny",
      evaluation: { type: "auto", evaluated_permission: { type: "deny", reason_code: "high_risk" } },
    });
    expect(textOf(ofType(events, "agent.tool_result")[0])).toContain("rm -rf*");
    expect(events.some(isActionIdle)).toBe(false);
  });

  it("allow beats ask: the call runs at once", async () => {
    const s = await session(rules);
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo allowed" } });
    await t.client.beta.sessions.events.send(s.id, { events: [userMessage("go")] });
    const events = await waitForHistory(t.client, s.id, (h) => h.some(isEndTurnIdle));
    expect(ofType(events, "agent.tool_use")[0]).toMatchObject({
      evaluated_permission: "allow",
      evaluation: { type: "auto", evaluated_permission: { type: "allow" } },
    });
    expect(textOf(ofType(events, "agent.tool_result")[0])).toContain("allowed");
  });

  it("only ask matches: the run parks for a human", async () => {
    const s = await session(rules);
    const { events } = await askOnce(s.id, "curl http://example.com");
    expect(ofType(events, "agent.tool_use")[0]).toMatchObject({
      evaluated_permission: "ask",
      evaluation: { type: "auto", evaluated_permission: { type: "ask", reason_code: "high_risk" } },
    });
  });

  it("rules on a policy other than auto are refused at publish", async () => {
    const error = await rejection(
      t.client.beta.agents.create({
        name: "bad",
        model: MODEL,
        tools: [
          {
            type: "agent_toolset_20260401",
            configs: [
              { name: "bash", permission_policy: { type: "always_allow", rules: [{ effect: "deny" }] } },
            ],
          },
        ] as never,
      }),
    );
    expect(error).toMatchObject(BAD_REQUEST);
    expect(error.message).toMatch(/rules apply only to \{"type":"auto"\}/);
  });
});
