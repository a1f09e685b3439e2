#!/usr/bin/env node
// The remote worker's HTTP client on its own: CPU per call of the product's poster
// (dist/worker/httpPost.js, undici's Pool.dispatch) beside a plain node:http keep-alive client
// doing the same calls, against one local node:http server in a child process that answers every
// POST with a small JSON document (a commit receipt's size). The worker makes about four such calls
// per turn, so this is the part of its CPU the transport's client decides. Build first
// (`npm run build`).
//
// Usage: node bench/workerPost.mjs [--lanes 8] [--calls 2000] [--repeat 3]
//   --lanes    calls in flight at once (as many worker slots)
//   --calls    calls per lane in each timed round, after a warm-up of a quarter as many
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { benchArgs } from "./args.mjs";

if (process.argv[2] === "--serve") {
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
} else {
  const values = benchArgs(import.meta.url, {
    lanes: { type: "string", default: "8" },
    calls: { type: "string", default: "2000" },
    repeat: { type: "string", default: "3" },
  });
  const lanes = Number(values.lanes);
  const calls = Number(values.calls);
  const repeat = Number(values.repeat);
  const { HttpPoster } = await import(new URL("../dist/worker/httpPost.js", import.meta.url).href);

  const server = fork(fileURLToPath(import.meta.url), ["--serve"]);
  try {
    const port = await new Promise((resolve) => server.once("message", resolve));
    const base = `http://127.0.0.1:${port}`;
    const path = "/v1/awaken/worker/commit";
    const headers = { authorization: `Bearer ${"t".repeat(32)}`, "content-type": "application/json" };
    const body = JSON.stringify({ op: { id: "op_1", facts: [{ kind: "message", text: "y".repeat(300) }] } });

    const poster = new HttpPoster(base);
    const agent = new http.Agent({ keepAlive: true });
    const clients = {
      "awaken poster (undici dispatch)": () => poster.post(path, headers, body, 30_000),
      "node:http keep-alive (reference)": () => nodeHttpPost(agent, `${base}${path}`, headers, body),
    };
    const results = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
    for (let round = 1; round <= repeat; round++) {
      for (const [name, call] of Object.entries(clients)) {
        await inLanes(call, lanes, Math.ceil(calls / 4));
        const cpu = process.cpuUsage();
        const started = performance.now();
        await inLanes(call, lanes, calls);
        const used = process.cpuUsage(cpu);
        const seconds = (performance.now() - started) / 1000;
        const perCall = (used.user + used.system) / (lanes * calls);
        results[name].push(perCall);
        process.stdout.write(
          `round ${round} ${name}: ${perCall.toFixed(1)} µs CPU per call, ${((lanes * calls) / seconds).toFixed(0)} calls/s\n`,
        );
      }
    }
    poster.close();
    agent.destroy();
    const [ours, reference] = Object.values(results).map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length);
    process.stdout.write(
      `\nmean CPU per call: awaken poster ${ours.toFixed(1)} µs, node:http ${reference.toFixed(1)} µs ` +
        `(ratio ${(ours / reference).toFixed(2)}, ${repeat} rounds each, ${lanes} lanes × ${calls} calls)\n`,
    );
  } finally {
    server.kill();
  }
}

/** `count` calls in each of `lanes` lanes, one after another within a lane. */
async function inLanes(call, lanes, count) {
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = 0; i < count; i++) await call();
    }),
  );
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
