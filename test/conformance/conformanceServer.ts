/**
 * The one real server a conformance file runs against: PostgreSQL (so the history invariants can
 * be read from the schema), a scripted model on the real Anthropic streaming wire, and an agent
 * that has a server tool (bash, always allowed), an approval tool (write, always asked) and a
 * client tool (get_weather) on a tier-"none" environment.
 */
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema } from "../support/postgresFixtures.js";
import { MODEL, WEATHER_TOOL } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";
import type { CommittedStore } from "./soundHistory.js";

export interface ConformanceServer extends CommittedStore {
  t: TestServer;
  model: FakeModelServer;
  close(): Promise<void>;
}

export async function startConformanceServer(): Promise<ConformanceServer> {
  const schema = await emptySchema();
  const model = await startFakeAnthropic();
  const t = await startTestServer({
    databaseUrl: schema.url,
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: model.url },
    workerPollMs: 50,
    // The environments here run hand tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
  });
  return {
    t,
    model,
    client: t.client,
    databaseUrl: schema.url,
    async close() {
      await t.close();
      await model.close();
      await schema.drop();
    },
  };
}

/** The client tool as AG-UI clients declare it for a run. */
export const WEATHER_FOR_AG_UI = {
  name: WEATHER_TOOL.name,
  description: WEATHER_TOOL.description,
  parameters: WEATHER_TOOL.input_schema,
};

export const CONFORMANCE_TOOLS = [
  WEATHER_TOOL,
  {
    type: "agent_toolset_20260401",
    configs: [
      { name: "bash", permission_policy: { type: "always_allow" } },
      { name: "write", permission_policy: { type: "always_ask" } },
    ],
  },
];

export async function conformanceAgent(t: TestServer, name: string): Promise<string> {
  const agent = await t.client.beta.agents.create({ name, model: MODEL, tools: CONFORMANCE_TOOLS as never });
  return agent.id;
}

/** A tier-"none" environment, where bash and write run in a plain workspace directory. */
export async function conformanceEnvironment(t: TestServer): Promise<string> {
  const environment = await t.client.beta.environments.create({
    name: "conformance",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return environment.id;
}

/** A fresh session of a conformance agent, made over the Managed wire. */
export async function conformanceSession(
  t: TestServer,
  name: string,
): Promise<{ agentId: string; sessionId: string }> {
  const agentId = await conformanceAgent(t, name);
  const session = await t.client.beta.sessions.create({
    agent: agentId,
    environment_id: await conformanceEnvironment(t),
  });
  return { agentId, sessionId: session.id };
}
