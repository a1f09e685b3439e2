import { openAwaken } from "awaken-agents";

// The whole platform in this process: SQLite in ./.awaken-embedded (or { databaseUrl } for
// PostgreSQL), two in-process workers, model providers from the same variables as `awaken up`.
const awaken = await openAwaken({ dataDir: process.env.AWAKEN_DATA_DIR ?? ".awaken-embedded", workers: 2 });
const beta = awaken.beta; // what `new Anthropic(...).beta` gives, minus HTTP

const agent = await beta.agents.create({
  name: "Embedded helper",
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
const environment = await beta.environments.create({ name: "embedded" });
const session = await beta.sessions.create({ agent: agent.id, environment_id: environment.id });

// Open the stream first, then send; answer each custom tool call until the turn ends.
const stream = await beta.sessions.events.stream(session.id);
await beta.sessions.events.send(session.id, {
  events: [{ type: "user.message", content: [{ type: "text", text: 'call get_weather {"city":"Oslo"}' }] }],
});
for await (const event of stream) {
  if (event.type === "agent.custom_tool_use")
    await beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: event.id,
          content: [{ type: "text", text: `Sunny in ${event.input.city}` }],
        },
      ],
    });
  if (event.type === "session.status_idle" && event.stop_reason?.type !== "requires_action") break;
}

// The committed history, as every client reads it; then stop the workers and close the database.
for await (const event of beta.sessions.events.list(session.id)) console.log(event.type);
await awaken.close();
