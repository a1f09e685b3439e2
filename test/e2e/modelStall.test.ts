import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    modelIdleTimeoutMs: 400,
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

describe("a model stream that goes silent", () => {
  it("is aborted after the idle timeout, recorded as a retrying error, and asked again", async () => {
    const agent = await t.client.beta.agents.create({ name: "stall", model: "claude-sonnet-4-6" });
    const env = await t.client.beta.environments.create({ name: "e" });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    fake.enqueue({ kind: "hang" }, { kind: "text", text: "finally" });
    const stream = await t.client.beta.sessions.events.stream(session.id);
    await t.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "are you there?" }] }],
    });
    const seen: Array<{ type: string } & Record<string, unknown>> = [];
    for await (const event of stream) {
      seen.push(event as unknown as { type: string } & Record<string, unknown>);
      if (event.type === "session.status_idle") break;
    }
    const error = seen.find((e) => e.type === "session.error") as unknown as {
      error: { type: string; message: string; retry_status: { type: string } };
    };
    expect(error.error.retry_status.type).toBe("retrying");
    expect(error.error.message).toContain("sent nothing");
    expect(JSON.stringify(seen.filter((e) => e.type === "agent.message"))).toContain("finally");
    expect(fake.requests).toHaveLength(2);
  });
});
