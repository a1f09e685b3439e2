/**
 * The official AG-UI client (`HttpAgent`) against a test server's AG-UI edge, and a recorder of
 * what one run shows: every event in order, the RUN_FINISHED or RUN_ERROR that ended it, and what
 * `runAgent()` resolved with.
 */
import { randomUUID } from "node:crypto";
import { HttpAgent, type HttpAgentConfig, type RunAgentParameters, type RunAgentResult } from "@ag-ui/client";
import type { BaseEvent, RunErrorEvent, RunFinishedEvent } from "@ag-ui/core";
import { TEST_API_KEY, type TestServer } from "./testServer.js";

// The client warns on every field it strips; the tests read events, not its console.
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";

export function agUiUrl(t: TestServer, agentId: string): string {
  return `${t.server.url}/v1/ag-ui/agents/${encodeURIComponent(agentId)}`;
}

/** An HttpAgent for `agentId` on `threadId` (a fresh thread unless given), with the test API key. */
export function agUiAgent(
  t: TestServer,
  agentId: string,
  threadId: string = `thread-${randomUUID()}`,
  config: Omit<HttpAgentConfig, "url" | "threadId"> = {},
): HttpAgent {
  return new HttpAgent({
    url: agUiUrl(t, agentId),
    threadId,
    ...config,
    headers: { "x-api-key": TEST_API_KEY, ...config.headers },
  });
}

export interface RecordedRun {
  events: BaseEvent[];
  types: string[];
  result: RunAgentResult;
  finished: RunFinishedEvent | undefined;
  runError: RunErrorEvent | undefined;
}

/** One `runAgent()`, recorded. A rejection (HTTP error, protocol violation) propagates. */
export async function recordRun(agent: HttpAgent, parameters?: RunAgentParameters): Promise<RecordedRun> {
  const events: BaseEvent[] = [];
  let finished: RunFinishedEvent | undefined;
  let runError: RunErrorEvent | undefined;
  const result = await agent.runAgent(parameters, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: ({ event }) => {
      finished = event;
    },
    onRunErrorEvent: ({ event }) => {
      runError = event;
    },
  });
  return { events, types: events.map((e) => e.type), result, finished, runError };
}

/** A user message the client adds before its next run; returns its id. */
export function say(agent: HttpAgent, text: string): string {
  const id = `msg-${randomUUID()}`;
  agent.addMessage({ id, role: "user", content: text });
  return id;
}
