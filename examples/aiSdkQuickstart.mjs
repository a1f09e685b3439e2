import Anthropic from "@anthropic-ai/sdk";
import { DefaultChatTransport, readUIMessageStream } from "ai";

const url = process.env.AWAKEN_URL ?? "http://127.0.0.1:4600";
const apiKey = process.env.AWAKEN_API_KEY;

// Agents are defined once, over the Managed Agents API; any protocol can then talk to them.
const client = new Anthropic({ baseURL: url, apiKey });
const agent = await client.beta.agents.create({ name: "Chat helper", model: "claude-sonnet-4-6" });

// What `useChat` does in a page: the first POST of a chat id with `agentId` starts its session
// (in the workspace's default environment); later POSTs of the same chat id continue it.
const transport = new DefaultChatTransport({
  api: `${url}/v1/ai-sdk/chat`,
  headers: { "x-api-key": apiKey },
  body: { agentId: agent.id },
});
const chatId = `quickstart-${Date.now()}`;
const stream = await transport.sendMessages({
  chatId,
  trigger: "submit-message",
  messageId: undefined,
  abortSignal: undefined,
  messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Hello from the AI SDK" }] }],
});
let reply;
for await (const message of readUIMessageStream({ stream })) reply = message;
console.log(
  "assistant:",
  reply.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join(""),
);

// The same conversation rebuilt from the committed history, as a reloading page reads it.
const sessions = await client.beta.sessions.list({ agent_id: agent.id });
const history = await fetch(`${url}/v1/ai-sdk/threads/${sessions.data[0].id}/messages`, {
  headers: { "x-api-key": apiKey },
}).then((r) => r.json());
for (const message of history.items) console.log(message.role, message.parts.map((p) => p.type).join(","));
