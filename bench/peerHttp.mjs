// The HTTP server on the peer workload: `awaken up --database-url <schema>` as its own process and
// the official SDK over loopback HTTP in this one, each run creating its session on the clock (as
// the embedded side and a DBOS workflow start do). Its machine CPU per run is this client's, the
// server's and PostgreSQL's processes together.
import Anthropic from "@anthropic-ai/sdk";
import { benchArgs } from "./args.mjs";
import { inChild, timeRuns } from "./peerRuns.mjs";
import { withScope } from "./scope.mjs";
import { API_KEY, TOPOLOGIES } from "./topologies.mjs";
import { oneTurn } from "./turnDriver.mjs";

/** runs/s and CPU per run of `awaken up` + the SDK over HTTP, sessions created on the clock. */
export function measureHttp({ databaseUrl, concurrency, runs }) {
  return inChild(import.meta.url, { url: databaseUrl, concurrency, runs });
}

async function child({ url, concurrency, runs }) {
  return withScope(async (scope) => {
    const server = await TOPOLOGIES.pg.start(scope, { concurrency, databaseUrl: url });
    const client = new Anthropic({ baseURL: server.url, apiKey: API_KEY, maxRetries: 0 });
    const agent = await client.beta.agents.create({
      name: "peer",
      model: "offline-peer",
      tools: [
        {
          type: "custom",
          name: "lookup",
          description: "look up",
          input_schema: { type: "object", properties: { q: { type: "string" } } },
        },
      ],
    });
    const env = await client.beta.environments.create({ name: "peer" });
    return timeRuns({
      concurrency,
      runs,
      runOne: async () => {
        const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
        await oneTurn(client, session.id);
      },
      walUrl: url,
      pids: server.pids,
    });
  });
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain && process.argv.includes("--child")) {
  const args = benchArgs(import.meta.url, {
    child: { type: "boolean" },
    url: { type: "string" },
    concurrency: { type: "string" },
    runs: { type: "string" },
  });
  const figures = await child({
    url: args.url,
    concurrency: Number(args.concurrency),
    runs: Number(args.runs),
  });
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
