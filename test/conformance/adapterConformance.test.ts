/**
 * The adapter scenario through each client protocol's official client, against one real server:
 * the Managed Agents SDK, the AI SDK chat, the AG-UI HttpAgent, the A2A client and the MCP client must each pass
 * every step the same way (see `adapterScenario.ts`), but the steps a driver names as beyond its
 * protocol (MCP's, see `mcpDriver.ts`).
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { A2aDriver } from "./a2aDriver.js";
import { ADAPTER_SCENARIO, type ScenarioContext } from "./adapterScenario.js";
import { AgUiDriver } from "./agUiDriver.js";
import { AiSdkDriver } from "./aiSdkDriver.js";
import { type ConformanceServer, conformanceSession, startConformanceServer } from "./conformanceServer.js";
import { ManagedDriver } from "./managedDriver.js";
import { MCP_SKIPPED_STEPS, McpDriver } from "./mcpDriver.js";
import type { ProtocolDriver } from "./protocolDriver.js";

interface DriverCase {
  name: string;
  /** Steps the protocol cannot express, each with the reason (see the driver). */
  skips?: Readonly<Record<string, string>>;
  open(server: ConformanceServer, session: { agentId: string; sessionId: string }): Promise<ProtocolDriver>;
}

const DRIVERS: DriverCase[] = [
  { name: "Managed Agents", open: (s, { sessionId }) => ManagedDriver.open(s.client, sessionId) },
  { name: "AI SDK", open: (s, { sessionId }) => AiSdkDriver.open(s.t.server.url, s.client, sessionId) },
  // The session id names the session as an AG-UI thread.
  { name: "AG-UI", open: async (s, { agentId, sessionId }) => new AgUiDriver(s.t, agentId, sessionId) },
  // The session id is the A2A context.
  { name: "A2A", open: (s, { agentId, sessionId }) => A2aDriver.open(s.t, agentId, sessionId) },
  {
    name: "A2A HTTP+JSON",
    open: (s, { agentId, sessionId }) => A2aDriver.open(s.t, agentId, sessionId, "HTTP+JSON"),
  },
  {
    name: "MCP",
    skips: MCP_SKIPPED_STEPS,
    open: (s, { agentId, sessionId }) => McpDriver.open(s.t.server.url, agentId, sessionId),
  },
];

describe.skipIf(postgresUnavailable() !== null)("adapter conformance", () => {
  let server: ConformanceServer;
  beforeAll(async () => {
    server = await startConformanceServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  describe.each(DRIVERS)("$name", (driverCase) => {
    const ctx = { said: [] as string[] } as unknown as ScenarioContext;
    beforeAll(async () => {
      const session = await conformanceSession(server.t, `conformance ${driverCase.name}`);
      ctx.server = server;
      ctx.sessionId = session.sessionId;
      ctx.driver = await driverCase.open(server, session);
    });
    afterAll(async () => {
      await ctx.driver?.close();
    });

    for (const step of ADAPTER_SCENARIO) {
      const skip = driverCase.skips?.[step.name];
      if (skip) it.skip(`${step.name} (${skip})`, () => {});
      else it(step.name, () => step.run(ctx));
    }
  });
});
