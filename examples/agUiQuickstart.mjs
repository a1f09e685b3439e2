import { HttpAgent } from "@ag-ui/client";
import Anthropic from "@anthropic-ai/sdk";

const url = process.env.AWAKEN_URL ?? "http://127.0.0.1:4600";
const apiKey = process.env.AWAKEN_API_KEY;

// Agents are defined once, over the Managed Agents API; any protocol can then talk to them.
const client = new Anthropic({ baseURL: url, apiKey });
const agent = await client.beta.agents.create({ name: "AG-UI helper", model: "claude-sonnet-4-6" });

// The thread id names the session: its first run starts it, later runs continue it.
const threadId = `quickstart-${Date.now()}`;
const run = new HttpAgent({
  url: `${url}/v1/ag-ui/agents/${agent.id}`,
  threadId,
  headers: { "x-api-key": apiKey },
});
run.addMessage({ id: "m1", role: "user", content: "Hello from AG-UI" });
const { newMessages } = await run.runAgent();
console.log("assistant:", newMessages.at(-1).content);

// A client that reconnects with a new agent object gets the committed history as a snapshot.
const again = new HttpAgent({ url: run.url, threadId, headers: { "x-api-key": apiKey } });
again.addMessage({ id: "m2", role: "user", content: "And again" });
await again.runAgent();
for (const message of again.messages) console.log(message.role);
