import { randomUUID } from "node:crypto";
import {
  type Message,
  type Part,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  TaskState,
} from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { TEST_API_KEY, type TestServer } from "./testServer.js";

/** The agent's A2A base URL: the card is `.well-known/agent-card.json` under it (hence the slash). */
export const a2aBase = (t: TestServer, agentId: string) => `${t.server.url}/v1/a2a/agents/${agentId}/`;

/** fetch carrying an API key (or access token), as an A2A peer configured with it would. */
export function keyedFetch(apiKey: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${apiKey}`);
    return fetch(input, { ...init, headers });
  };
}

/** fetch carrying the workspace API key. */
export const authedFetch: typeof fetch = keyedFetch(TEST_API_KEY);

/** The official client, from the agent's card, over JSON-RPC (or the HTTP+JSON binding). */
export async function a2aClient(
  t: TestServer,
  agentId: string,
  binding: "JSONRPC" | "HTTP+JSON" = "JSONRPC",
): Promise<Client> {
  return a2aClientAt(t.server.url, agentId, binding);
}

/** The same, for a server at `url` (a server process started with TEST_API_KEY). */
export async function a2aClientAt(
  url: string,
  agentId: string,
  binding: "JSONRPC" | "HTTP+JSON" = "JSONRPC",
  apiKey: string = TEST_API_KEY,
): Promise<Client> {
  const fetchImpl = keyedFetch(apiKey);
  const factory = new ClientFactory({
    transports: [
      binding === "JSONRPC"
        ? new JsonRpcTransportFactory({ fetchImpl })
        : new RestTransportFactory({ fetchImpl }),
    ],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(`${url}/v1/a2a/agents/${agentId}/`);
}

export function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    mediaType: "text/plain",
    filename: "",
    metadata: undefined,
  };
}

export function dataPart(value: Record<string, unknown>): Part {
  return {
    content: { $case: "data", value },
    mediaType: "application/json",
    filename: "",
    metadata: undefined,
  };
}

/** A user message request; `taskId`/`contextId` continue a task or a context. */
export function userRequest(
  parts: Part[] | string,
  ids: { taskId?: string; contextId?: string } = {},
  configuration?: SendMessageRequest["configuration"],
): SendMessageRequest {
  const message: Message = {
    role: Role.ROLE_USER,
    messageId: randomUUID(),
    parts: typeof parts === "string" ? [textPart(parts)] : parts,
    contextId: ids.contextId ?? "",
    taskId: ids.taskId ?? "",
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: "", message, configuration, metadata: undefined };
}

export const stateName = (state: TaskState | undefined): string =>
  state === undefined ? "none" : (TaskState[state] ?? String(state)).replace("TASK_STATE_", "");

/** One stream event as `case:STATE` (status updates and tasks) or `artifactUpdate`. */
export function describeEvent(event: StreamResponse): string {
  const p = event.payload;
  if (p?.$case === "task") return `task:${stateName(p.value.status?.state)}`;
  if (p?.$case === "statusUpdate") return `status:${stateName(p.value.status?.state)}`;
  return p?.$case ?? "none";
}

export function partsText(parts: readonly Part[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
}

/** Collects a stream to its end. */
export async function collect(events: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of events) out.push(event);
  return out;
}
