#!/usr/bin/env node
// One turn through each client protocol, side by side: the same custom-tool turn (message → the
// model calls a client tool → the client answers → the model's final text) driven by each
// protocol's official client against one SQLite all-in-one server and the offline model, one turn
// at a time. What differs between the lines is the edge: its request mapping, its stream format
// and the client's own work; the core below them is the same.
//
// Usage: node bench/protocolTurns.mjs [--turns N]   (default 200 per protocol, after the warm-up of bench/warmup.mjs)
// Results go to stdout; progress goes to stderr.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { HttpAgent } from "@ag-ui/client";
import Anthropic from "@anthropic-ai/sdk";
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls } from "ai";
import { benchArgs } from "./args.mjs";
import { startAwaken } from "./processes.mjs";
import { withScope } from "./scope.mjs";
import { oneTurn } from "./turnDriver.mjs";
import { warmupRuns } from "./warmup.mjs";

const API_KEY = "bench";
const WARMUP = warmupRuns(1);
const PROMPT = 'call lookup {"q":"bench"}';
const TOOL = {
  name: "lookup",
  description: "look up",
  input_schema: { type: "object", properties: { q: { type: "string" } } },
};

const values = benchArgs(import.meta.url, { turns: { type: "string", default: "200" } });
const turns = Math.floor(Number(values.turns));
if (!(turns >= 1)) {
  console.error("bench: --turns must be a positive number");
  process.exit(2);
}
// The AG-UI client warns about message transformations on every run; the bench has none.
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";

/** A plain-object state for `AbstractChat`, as the framework bindings keep theirs. */
// Declared before the top-level await below uses it (a class is not hoisted).
class NodeChat extends AbstractChat {
  constructor(init) {
    const state = {
      status: "ready",
      error: undefined,
      messages: [],
      pushMessage(m) {
        state.messages = state.messages.concat(m);
      },
      popMessage() {
        state.messages = state.messages.slice(0, -1);
      },
      replaceMessage(i, m) {
        state.messages = [...state.messages.slice(0, i), m, ...state.messages.slice(i + 1)];
      },
      snapshot: (x) => structuredClone(x),
    };
    super({ ...init, state });
  }
}

const log = (message) => process.stderr.write(`[protocol-turns] ${message}\n`);

await withScope(async (scope) => {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-bench-"));
  scope.defer(() => rmSync(dataDir, { recursive: true, force: true }));
  const { match } = await startAwaken(scope, {
    label: "awaken up",
    args: ["up", "--port", "0", "--data-dir", dataDir, "--workers", "4"],
    env: { AWAKEN_API_KEY: API_KEY },
    ready: /listening on (http:\/\/\S+)/,
  });
  const url = match[1];
  const client = new Anthropic({ baseURL: url, apiKey: API_KEY, maxRetries: 0 });
  const agent = await client.beta.agents.create({
    name: "bench",
    model: "offline-bench",
    tools: [{ type: "custom", ...TOOL }],
  });
  const env = await client.beta.environments.create({ name: "bench" });
  const newSession = async () =>
    (await client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id;

  const protocols = [
    ["Managed Agents (@anthropic-ai/sdk)", (id) => oneTurn(client, id)],
    ["AI SDK UI stream (ai AbstractChat)", (id) => aiSdkTurn(url, id)],
    ["AG-UI (@ag-ui/client HttpAgent)", (id) => agUiTurn(url, agent.id, id)],
  ];
  const rows = [];
  for (const [label, turn] of protocols) {
    log(`${label}: ${WARMUP} warm-up + ${turns} timed turns`);
    for (let i = 0; i < WARMUP; i++) await turn(await newSession());
    const samples = [];
    for (let i = 0; i < turns; i++) {
      // Sessions exist before the clock starts: a turn is the protocol's exchange, not a creation.
      const id = await newSession();
      const t0 = performance.now();
      await turn(id);
      samples.push(performance.now() - t0);
    }
    rows.push({ label, ...stats(samples) });
  }

  console.log(
    `Awaken protocol turns, ${new Date().toISOString()}: Node ${process.version}, ${cpus().length} CPUs, ` +
      `load average ${loadavg()[0].toFixed(2)} at start; SQLite all-in-one, offline model, one turn at a ` +
      `time, ${turns} turns per protocol (message → client tool → answer → final text)`,
  );
  const base = rows[0].p50;
  console.log("");
  console.log("| protocol | p50 ms | p95 ms | mean ms | turns/s | p50 vs Managed |");
  console.log("|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.mean.toFixed(1)} | ` +
        `${(1000 / r.mean).toFixed(1)} | ${(r.p50 / base).toFixed(2)}× |`,
    );
  }
});

/** The AI SDK: the client answers the tool in `onToolCall` and re-posts by itself. */
async function aiSdkTurn(url, sessionId) {
  let finished = 0;
  let wake = () => {};
  const chat = new NodeChat({
    id: sessionId,
    transport: new DefaultChatTransport({
      api: `${url}/v1/ai-sdk/chat`,
      headers: { "x-api-key": API_KEY },
      body: { threadId: sessionId },
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    onToolCall: ({ toolCall }) => {
      chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: "42" });
    },
    onFinish: () => {
      finished += 1;
      wake();
    },
  });
  await chat.sendMessage({ text: PROMPT });
  // The automatic re-post with the tool's output is the turn's second half.
  while (finished < 2 || chat.status !== "ready") {
    if (chat.status === "error") throw chat.error;
    await new Promise((resolve) => {
      wake = resolve;
      setTimeout(resolve, 50);
    });
  }
  const last = chat.messages.at(-1);
  if (!last?.parts.some((p) => p.type === "text" && p.text.length > 0))
    throw new Error("the AI SDK turn ended without the model's final text");
}

/** AG-UI: the first run ends with the pending call, the second carries the tool message. */
async function agUiTurn(url, agentId, sessionId) {
  const agent = new HttpAgent({
    url: `${url}/v1/ag-ui/agents/${agentId}`,
    threadId: sessionId,
    headers: { "x-api-key": API_KEY },
  });
  agent.addMessage({ id: `u-${sessionId}`, role: "user", content: PROMPT });
  const tools = [{ name: TOOL.name, description: TOOL.description, parameters: TOOL.input_schema }];
  let outcome;
  await agent.runAgent({ tools }, { onRunFinishedEvent: ({ event }) => (outcome = event.outcome) });
  const pending = outcome?.pendingToolCallIds ?? [];
  if (pending.length !== 1) throw new Error(`expected one pending tool call, got ${JSON.stringify(outcome)}`);
  agent.addMessage({ id: `t-${pending[0]}`, role: "tool", toolCallId: pending[0], content: "42" });
  let error;
  await agent.runAgent({ tools }, { onRunErrorEvent: ({ event }) => (error = event) });
  if (error) throw new Error(`AG-UI run failed: ${error.message}`);
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}
