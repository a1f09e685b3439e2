#!/usr/bin/env node
/**
 * Smoke run of the built server on whichever Node runs this script: starts `awaken up` on a fresh
 * SQLite data dir, drives one turn with a custom tool round trip through the official SDK, stops it
 * with SIGTERM and requires a clean exit (a native driver that aborts during a garbage collection
 * shows up as SIGABRT here). Repeats `--starts N` times (default 1) and exits non-zero on any failure.
 *
 *   node test/smoke/nodeLine.mjs [--starts N]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";

const ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const API_KEY = "sk-awaken-smoke-key";
const starts = Number(process.argv[process.argv.indexOf("--starts") + 1] ?? 1) || 1;

function startServer(dataDir) {
  const child = spawn(process.execPath, [ENTRY, "up", "--port", "0", "--data-dir", dataDir], {
    env: { PATH: process.env.PATH, AWAKEN_API_KEY: API_KEY, AWAKEN_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk) => {
    err += chunk;
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 20 s:\n${out}\n${err}`)), 20_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before listening:\n${out}\n${err}`));
    });
  });
  return { child, url, exited, stderr: () => err };
}

/** One turn: the offline model calls the custom tool, the result goes back, the turn ends. */
async function oneTurn(baseURL) {
  const client = new Anthropic({ baseURL, apiKey: API_KEY, maxRetries: 0 });
  const agent = await client.beta.agents.create({
    name: "smoke",
    model: "offline",
    tools: [
      {
        type: "custom",
        name: "get_weather",
        description: "Weather for a city",
        input_schema: { type: "object", properties: { city: { type: "string" } } },
      },
    ],
  });
  const environment = await client.beta.environments.create({ name: "smoke" });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  const send = (events) => client.beta.sessions.events.send(session.id, { events });
  const waitIdle = async (count) => {
    for (let i = 0; i < 200; i += 1) {
      const idles = [];
      for await (const event of client.beta.sessions.events.list(session.id)) {
        if (event.type === "session.status_idle") idles.push(event);
      }
      if (idles.length >= count) return idles[count - 1];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`session ${session.id} did not go idle ${count} time(s)`);
  };
  await send([
    { type: "user.message", content: [{ type: "text", text: 'call get_weather {"city":"Oslo"}' }] },
  ]);
  const waiting = await waitIdle(1);
  if (waiting.stop_reason?.type !== "requires_action")
    throw new Error(`expected requires_action: ${JSON.stringify(waiting)}`);
  const [toolUseId] = waiting.stop_reason.event_ids;
  await send([
    {
      type: "user.custom_tool_result",
      custom_tool_use_id: toolUseId,
      content: [{ type: "text", text: "sunny" }],
    },
  ]);
  const ended = await waitIdle(2);
  if (ended.stop_reason?.type !== "end_turn") throw new Error(`expected end_turn: ${JSON.stringify(ended)}`);
}

let failures = 0;
const startedAt = Date.now();
for (let i = 1; i <= starts; i += 1) {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-smoke-"));
  const server = startServer(dataDir);
  try {
    await oneTurn(await server.url);
    server.child.kill("SIGTERM");
    const code = await server.exited;
    if (code !== 0) throw new Error(`exit ${code} after SIGTERM:\n${server.stderr().slice(-2000)}`);
  } catch (error) {
    failures += 1;
    console.error(`start ${i}: ${error instanceof Error ? error.message : error}`);
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    await server.exited;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
console.log(
  `node ${process.version}: ${starts - failures}/${starts} starts served a custom-tool turn and exited cleanly ` +
    `(${Math.round((Date.now() - startedAt) / starts)} ms each)`,
);
process.exit(failures === 0 ? 0 : 1);
