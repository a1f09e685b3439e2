import { randomUUID } from "node:crypto";
import { Role } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import Anthropic from "@anthropic-ai/sdk";

const url = process.env.AWAKEN_URL ?? "http://127.0.0.1:4600";
const apiKey = process.env.AWAKEN_API_KEY;

// Agents are defined once, over the Managed Agents API; any protocol can then talk to them.
const client = new Anthropic({ baseURL: url, apiKey });
const agent = await client.beta.agents.create({ name: "A2A helper", model: "claude-sonnet-4-6" });

// Every A2A request carries the workspace API key; the card says so (securitySchemes).
const fetchImpl = (input, init) =>
  fetch(input, { ...init, headers: { ...init?.headers, "x-api-key": apiKey } });
const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory({ fetchImpl })],
  cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
});
// The card is at <base>/.well-known/agent-card.json; the trailing slash keeps the agent's path.
const peer = await factory.createFromUrl(`${url}/v1/a2a/agents/${agent.id}/`);

const say = (text, contextId = "") => ({
  tenant: "",
  message: {
    role: Role.ROLE_USER,
    messageId: randomUUID(),
    parts: [{ content: { $case: "text", value: text }, mediaType: "text/plain", filename: "" }],
    contextId,
    taskId: "",
    extensions: [],
    referenceTaskIds: [],
  },
});

// A task is one turn; its context is the session. The stream ends when the task comes to rest.
let task;
for await (const event of peer.sendMessageStream(say("Hello from A2A"))) {
  if (event.payload.$case === "task") task = event.payload.value;
}
const done = await peer.getTask({ tenant: "", id: task.id });
console.log("assistant:", done.artifacts.at(-1).parts[0].content.value);

// The same context again: a second task in the same session, visible over the Managed API too.
const second = await peer.sendMessage(say("And again", task.contextId));
const events = await client.beta.sessions.events.list(second.contextId);
for (const event of events.data) if (event.type.endsWith("message")) console.log(event.type);
