#!/usr/bin/env node
// The remote worker transport's cost per call, both ends, with nothing behind it. Build first
// (`npm run build`).
//
// 1. The HTTP client alone: CPU per call of the product's poster (dist/worker/httpPost.js, undici's
//    Pool.dispatch) beside a plain node:http keep-alive client doing the same calls, against one
//    local node:http server in a child process answering every POST with a small JSON document.
// 2. The whole call: the worker's transport (dist/worker/httpTransport.js) against the
//    coordinator's worker routes (token check, the product's body parser, zod) on Fastify in a child
//    process, whose gateway answers at once with bodies the size of a benchmark turn's (a claim
//    answering an activation with 8 facts of history, a commit of 6 facts); one claim and one
//    commit per round trip pair, as a turn's slice makes. CPU per call of each end.
// A turn makes four such calls (bench/turns.mjs prints "worker transport calls per turn"), so these
// figures times four are what the transport itself costs a pg-remote turn; the rest of what the
// remote topology costs beyond in-process workers is two more processes woken on every call.
//
// Usage: node bench/workerPost.mjs [--lanes 8] [--calls 2000] [--repeat 3]
//   --lanes    calls in flight at once (as many worker slots)
//   --calls    calls per lane in each timed round, after a warm-up of a quarter as many
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { benchArgs } from "./args.mjs";

const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const TOKEN = "t".repeat(40);

if (process.argv[2] === "--serve-plain") servePlain();
else if (process.argv[2] === "--serve-routes") await serveRoutes();
else await main();

async function main() {
  const values = benchArgs(import.meta.url, {
    lanes: { type: "string", default: "8" },
    calls: { type: "string", default: "2000" },
    repeat: { type: "string", default: "3" },
  });
  const lanes = Number(values.lanes);
  const calls = Number(values.calls);
  const repeat = Number(values.repeat);
  await clientAlone(lanes, calls, repeat);
  await wholeCall(lanes, calls, repeat);
}

/** Part 1: the product's poster beside a plain node:http keep-alive client. */
async function clientAlone(lanes, calls, repeat) {
  const { HttpPoster } = await import(dist("worker/httpPost.js"));
  const server = fork(fileURLToPath(import.meta.url), ["--serve-plain"]);
  try {
    const port = await new Promise((resolve) => server.once("message", resolve));
    const base = `http://127.0.0.1:${port}`;
    const path = "/v1/awaken/worker/commit";
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const body = JSON.stringify({ op: { id: "op_1", facts: [{ kind: "message", text: "y".repeat(300) }] } });
    const poster = new HttpPoster(base);
    const agent = new http.Agent({ keepAlive: true });
    const clients = {
      "awaken poster (undici dispatch)": () => poster.post(path, headers, body, 30_000),
      "node:http keep-alive (reference)": () => nodeHttpPost(agent, `${base}${path}`, headers, body),
    };
    const results = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
    process.stdout.write("1. The HTTP client alone (CPU per call of the calling process)\n");
    for (let round = 1; round <= repeat; round++) {
      for (const [name, call] of Object.entries(clients)) {
        const { clientUs, perSecond } = await timed(call, lanes, calls);
        results[name].push(clientUs);
        process.stdout.write(
          `  round ${round} ${name}: ${clientUs.toFixed(1)} µs, ${perSecond.toFixed(0)} calls/s\n`,
        );
      }
    }
    poster.close();
    agent.destroy();
    const [ours, reference] = Object.values(results).map(mean);
    process.stdout.write(
      `  mean: awaken poster ${ours.toFixed(1)} µs, node:http ${reference.toFixed(1)} µs ` +
        `(ratio ${(ours / reference).toFixed(2)}, ${repeat} rounds each, ${lanes} lanes × ${calls} calls)\n\n`,
    );
  } finally {
    server.kill();
  }
}

/** Part 2: the worker's transport against the coordinator's worker routes, CPU of both ends. */
async function wholeCall(lanes, calls, repeat) {
  const { HttpWorkerTransport } = await import(dist("worker/httpTransport.js"));
  const server = fork(fileURLToPath(import.meta.url), ["--serve-routes"]);
  try {
    const url = await new Promise((resolve) => server.once("message", resolve));
    const serverCpu = () =>
      new Promise((resolve) => {
        server.once("message", resolve);
        server.send("cpu");
      });
    const transport = new HttpWorkerTransport({
      baseUrl: url,
      token: TOKEN,
      log: { info() {}, warn() {} },
      claimWaitMs: 0,
    });
    const op = commitOperation();
    // One claim and one commit: the two calls of a slice.
    const pair = async () => {
      await transport.claim("bench/0", 15_000);
      await transport.commit(op);
    };
    const serverUs = [];
    const clientUs = [];
    process.stdout.write(
      "2. The whole call: worker transport → coordinator's worker routes (CPU per call)\n",
    );
    for (let round = 1; round <= repeat; round++) {
      await inLanes(pair, lanes, Math.ceil(calls / 8));
      const before = await serverCpu();
      const { clientUs: client } = await timed(pair, lanes, calls / 2, false);
      const spent = (await serverCpu()) - before;
      const server = spent / (lanes * calls);
      // timed() divides by the pairs it ran; each pair is two calls.
      serverUs.push(server);
      clientUs.push(client / 2);
      process.stdout.write(
        `  round ${round}: coordinator ${server.toFixed(1)} µs, worker ${(client / 2).toFixed(1)} µs\n`,
      );
    }
    transport.close();
    const [coordinator, worker] = [mean(serverUs), mean(clientUs)];
    process.stdout.write(
      `  mean: coordinator ${coordinator.toFixed(1)} µs + worker ${worker.toFixed(1)} µs per call; ` +
        `× 4 calls per turn = ${((4 * (coordinator + worker)) / 1000).toFixed(2)} ms of CPU per pg-remote turn\n`,
    );
  } finally {
    server.kill();
  }
}

/**
 * `count` calls of `call` in each of `lanes` lanes, after a warm-up of a quarter as many unless
 * `warm` is false: CPU µs of this process per call, and calls/s.
 */
async function timed(call, lanes, count, warm = true) {
  if (warm) await inLanes(call, lanes, Math.ceil(count / 4));
  const cpu = process.cpuUsage();
  const started = performance.now();
  await inLanes(call, lanes, count);
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  return { clientUs: (used.user + used.system) / (lanes * count), perSecond: (lanes * count) / seconds };
}

/** `count` calls in each of `lanes` lanes, one after another within a lane. */
async function inLanes(call, lanes, count) {
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = 0; i < count; i++) await call();
    }),
  );
}

function mean(xs) {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The reference: one POST on a kept-alive node:http agent, the answer read whole. */
function nodeHttpPost(agent, url, headers, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } },
      (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

function servePlain() {
  const answer = JSON.stringify({
    ok: true,
    facts: Array.from({ length: 5 }, (_, seq) => ({ seq, text: "x".repeat(200) })),
  });
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(answer);
    });
  });
  server.listen(0, "127.0.0.1", () => process.send?.(server.address().port));
}

/** The coordinator's worker routes as `awaken up` mounts them, over a gateway that answers at once. */
async function serveRoutes() {
  const { default: Fastify } = await import("fastify");
  const { installJsonBodyParser } = await import(dist("edge/http/jsonBodyParser.js"));
  const { workerTransportRoutes } = await import(dist("edge/worker-transport/workerRoutes.js"));
  const activation = claimedActivation();
  const op = commitOperation();
  const receipt = {
    ok: true,
    duplicate: false,
    receipt: {
      opId: op.opId,
      runId: op.runId,
      threadId: op.threadId,
      versionAfter: 8,
      eventIds: op.facts.map((f) => f.id),
      committedAt: Date.now(),
      settled: "awaiting",
    },
  };
  const gateway = {
    claim: async (owner) => ({ ...activation, owner }),
    commit: async () => receipt,
    renew: async () => true,
    release: async () => {},
    readThread: async () => [],
    publish: () => {},
    onWork: () => () => {},
    onRunCancelled: () => () => {},
  };
  const app = Fastify({ logger: false });
  installJsonBodyParser(app);
  const refuse = () => Promise.reject(new Error("no credentials here"));
  app.register(async (scope) =>
    workerTransportRoutes(scope, {
      gateway,
      token: TOKEN,
      leaseMs: 15_000,
      pollMs: 500,
      credentials: {
        custody: { open: refuse, secretVariables: refuse, openSecret: refuse },
        runSession: refuse,
      },
    }),
  );
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  process.on("message", (message) => {
    if (message !== "cpu") return;
    const used = process.cpuUsage();
    process.send?.(used.user + used.system);
  });
  process.send?.(url);
}

function ids(prefix, n) {
  return `${prefix}_${String(n).padStart(26, "0")}`;
}

/** A commit the size of a benchmark turn's first (model request span, message, tool use, usage). */
function commitOperation() {
  const facts = [
    {
      type: "span.model_request_start",
      body: { provider: "offline", model: "offline-bench", context_seq: 2 },
    },
    { type: "agent.message", body: { content: [{ type: "text", text: "[offline model] Calling lookup." }] } },
    { type: "agent.custom_tool_use", body: { name: "lookup", input: { q: "bench" } } },
    {
      type: "span.model_request_end",
      body: {
        is_error: false,
        model_usage: {
          input_tokens: 34,
          output_tokens: 13,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
      },
    },
    { type: "session.usage", body: { usage: { input_tokens: 34, output_tokens: 13 } } },
    {
      type: "session.status_idle",
      body: { stop_reason: { type: "requires_action", event_ids: [ids("sevt", 3)] } },
    },
  ].map((fact, i) => ({ id: ids("sevt", i + 1), ...fact }));
  return {
    opId: `op_${ids("run", 1)}_v2`,
    runId: ids("run", 1),
    threadId: ids("sthr", 1),
    owner: "bench/0",
    epoch: 1,
    expectedVersion: 2,
    facts,
    settle: "awaiting",
  };
}

/** An activation with the agent, environment and history of a benchmark turn's second slice. */
function claimedActivation() {
  const history = commitOperation().facts.map((fact, i) => ({
    ...fact,
    sessionId: ids("sesn", 1),
    threadId: ids("sthr", 1),
    seq: i + 1,
    createdAt: Date.now(),
  }));
  return {
    runId: ids("run", 1),
    sessionId: ids("sesn", 1),
    threadId: ids("sthr", 1),
    workspaceId: "wrkspc_default",
    epoch: 2,
    leaseExpiresAt: Date.now() + 15_000,
    crashCount: 0,
    agent: {
      workspaceId: "wrkspc_default",
      agentId: ids("agent", 1),
      version: 1,
      fingerprint: "f".repeat(64),
      definition: {
        name: "bench",
        model: { id: "offline-bench" },
        tools: [
          {
            type: "custom",
            name: "lookup",
            description: "look up",
            input_schema: { type: "object", properties: { q: { type: "string" } } },
          },
        ],
        mcp_servers: [],
        skills: [],
        metadata: {},
      },
      publishedAt: Date.now(),
    },
    environment: {
      id: ids("env", 1),
      revision: 1,
      config: { type: "cloud", networking: { type: "unrestricted" } },
    },
    history: [
      ...history,
      ...history.slice(0, 2).map((f, i) => ({ ...f, id: ids("sevt", 10 + i), seq: 7 + i })),
    ],
    traceContext: null,
    captureContent: false,
  };
}
