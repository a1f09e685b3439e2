import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";

const client = new Anthropic({
  baseURL: process.env.AWAKEN_URL ?? "http://127.0.0.1:4600",
  apiKey: process.env.AWAKEN_API_KEY,
});

// An agent with one custom tool: your code runs it when the model asks for it.
const agent = await client.beta.agents.create({
  name: "Helper",
  model: "claude-sonnet-4-6", // served by the offline model when no ANTHROPIC_API_KEY is set
  tools: [
    {
      type: "custom",
      name: "get_weather",
      description: "Current weather in a city",
      input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  ],
});
const environment = await client.beta.environments.create({ name: "quickstart" });
const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });

// The offline model calls a tool when asked to with `call <tool> <json input>`.
await client.beta.sessions.events.send(session.id, {
  events: [{ type: "user.message", content: [{ type: "text", text: 'call get_weather {"city":"Oslo"}' }] }],
});

// The SDK's tool runner answers each tool call with `run` until the turn ends.
const getWeather = betaTool({
  name: "get_weather",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  run: (input) => `Sunny in ${input.city}`,
});
for await (const call of client.beta.sessions.events.toolRunner(session.id, {
  tools: [getWeather],
  maxIdleMs: 500,
}))
  console.log("answered", call.name ?? call.type);

// The committed history: the same events every client reads.
for await (const event of client.beta.sessions.events.list(session.id)) console.log(event.type);
