// A coding-agent harness that speaks the Agent Client Protocol (the official SDK's agent side) over
// its stdin and stdout, scripted by the prompt text, for the ACP Brain tests. Bundled into one file
// to run in a sandbox (fakeHarnessBundle.ts). Every line of a prompt is one step:
//
//   say <text>                       agent_message_chunk(s)
//   think <text>                     agent_thought_chunk, then a message
//   tool <kind> <title> <json>       tool_call (pending) → session/request_permission (allow / reject)
//                                    → allowed: in_progress → its effect → completed with content;
//                                      rejected: failed "denied". Effects by kind: edit {path, content}
//                                      writes (fs/write_text_file), read {path, line?, limit?} reads,
//                                      execute {command, args?, cwd?} runs a terminal; others none.
//   read <path>                      fs/read_text_file, its content said back
//   write <path> <text>              fs/write_text_file
//   run <command> <args…>            terminal/create, wait_for_exit, output, release; the output said
//   slow <ms>                        sleeps in steps; a session/cancel ends the turn as `cancelled`
//   crash                            the process exits (137) mid-turn
//   usage [<used> [<size>]]          a usage_update
//   tokens <input> <output>          the prompt's response reports these tokens (ACP's draft `usage`)
//   tools                            lists the tools of the session's stdio MCP servers, said back
//   mcpall <tool> <json> ;; <tool> <json> …   those `mcp` steps at once (as a model's parallel calls)
//   mcp <tool> <json>                as Claude Code calls an MCP tool: tool_call `mcp__<server>__<tool>`
//                                    → session/request_permission → tools/call on the session's stdio
//                                    MCP server (started on first use) → completed; the result said
//                                    back as "tool <tool>: <text>" (or "tool <tool> failed: <text>")
//   env <NAME>                       says whether the variable is set (and its length, never its value)
//   stop <reason>                    ends the turn with that stopReason
//   fail <message>                   the prompt request fails with that message
//   anything else                    said back as "echo: <line>"
//
// The turn then ends with `end_turn`. Every update of a session (and each prompt, as
// user_message_chunk) is recorded in `<cwd>/.fake-harness/<sessionId>.jsonl`; session/load replays
// that file as session/update notifications, then answers.
//
// FAKE_HARNESS_FAIL_INIT=1: `initialize` exits the process (a harness that fails to launch),
// saying why on stderr with FAKE_HARNESS_FAIL_NOTE appended when set.
// FAKE_HARNESS_DROP_BEFORE_NEW=<n>: the first n `session/new` requests (counted in
// `<cwd>/.fake-harness/drops`) exit the process instead of answering (a harness that must be
// launched again). Nothing but protocol messages is written on stdout.
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { agent, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** The prompt response's token usage, when a `tokens` step set it. */
const reported = (turn) => (turn.tokens ? { usage: turn.tokens } : {});

// stdout carries the protocol: anything a library logs goes to stderr.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

const STATE_DIR = ".fake-harness";
const SESSION_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** sessionId → { cwd, turn: AbortController | null, mcpServers, mcp: { name, client } | null } */
const sessions = new Map();
let toolCalls = 0;

const stateDir = (cwd) => {
  const dir = join(cwd, STATE_DIR);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const historyFile = (cwd, sessionId) => join(stateDir(cwd), `${sessionId}.jsonl`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value) => ({ type: "text", text: value });

function absoluteCwd(cwd) {
  if (typeof cwd !== "string" || !cwd.startsWith("/"))
    throw RequestError.invalidParams(undefined, "cwd must be absolute");
  return cwd;
}

function session(sessionId) {
  const found = sessions.get(sessionId);
  if (!found) throw RequestError.sessionNotFound(String(sessionId));
  return found;
}

/** Sends one update and records it for session/load. */
async function update(client, sessionId, body) {
  appendFileSync(historyFile(session(sessionId).cwd, sessionId), `${JSON.stringify(body)}\n`);
  await client.notify(methods.client.session.update, { sessionId, update: body });
}

async function say(client, sessionId, message) {
  // In pieces, as a streaming model would.
  const pieces = message.match(/[\s\S]{1,16}/g) ?? [""];
  for (const piece of pieces)
    await update(client, sessionId, { sessionUpdate: "agent_message_chunk", content: text(piece) });
}

/** A tool's effect through the client; the content its completion shows. */
async function effect(client, sessionId, kind, input, toolCallId) {
  if (kind === "edit") {
    await client.request(methods.client.fs.writeTextFile, {
      sessionId,
      path: input.path,
      content: input.content,
    });
    return { content: [{ type: "diff", path: input.path, oldText: null, newText: input.content }] };
  }
  if (kind === "read") {
    const { content } = await client.request(methods.client.fs.readTextFile, {
      sessionId,
      path: input.path,
      line: input.line ?? null,
      limit: input.limit ?? null,
    });
    return { content: [{ type: "content", content: text(content) }] };
  }
  if (kind === "execute") {
    const result = await runTerminal(
      client,
      sessionId,
      input.command,
      input.args ?? [],
      input.cwd,
      (terminalId) =>
        update(client, sessionId, {
          sessionUpdate: "tool_call_update",
          toolCallId,
          content: [{ type: "terminal", terminalId }],
        }),
    );
    return {
      content: [{ type: "content", content: text(result.output) }],
      rawOutput: { exitCode: result.exitCode, signal: result.signal, output: result.output },
    };
  }
  return { content: [{ type: "content", content: text("done") }] };
}

async function runTerminal(client, sessionId, command, args, cwd, started) {
  const { terminalId } = await client.request(methods.client.terminal.create, {
    sessionId,
    command,
    args,
    ...(cwd ? { cwd } : {}),
  });
  try {
    if (started) await started(terminalId);
    const exit = await client.request(methods.client.terminal.waitForExit, { sessionId, terminalId });
    const { output, truncated } = await client.request(methods.client.terminal.output, {
      sessionId,
      terminalId,
    });
    return { output, truncated, exitCode: exit.exitCode ?? null, signal: exit.signal ?? null };
  } finally {
    await client.request(methods.client.terminal.release, { sessionId, terminalId });
  }
}

async function tool(client, sessionId, rest, turn) {
  const match = /^(\S+)\s+(.*?)\s*(\{.*\})?$/s.exec(rest);
  if (!match) throw RequestError.invalidParams(undefined, "tool <kind> <title> <json rawInput>");
  const [, kind, title, json] = match;
  const rawInput = json ? JSON.parse(json) : {};
  toolCalls += 1;
  const toolCallId = `call_${toolCalls}`;
  await update(client, sessionId, {
    sessionUpdate: "tool_call",
    toolCallId,
    title,
    kind,
    status: "pending",
    rawInput,
  });
  const { outcome } = await client.request(methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId, title, kind, status: "pending", rawInput },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  });
  if (outcome.outcome === "cancelled" || turn.signal.aborted) {
    await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    return "cancelled";
  }
  if (outcome.optionId !== "allow") {
    await update(client, sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "failed",
      content: [{ type: "content", content: text("denied") }],
    });
    return undefined;
  }
  await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  try {
    const done = await effect(client, sessionId, kind, rawInput, toolCallId);
    await update(client, sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      ...done,
    });
  } catch (error) {
    await update(client, sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "failed",
      content: [{ type: "content", content: text(error instanceof Error ? error.message : String(error)) }],
    });
  }
  return undefined;
}

/** The session's first stdio MCP server, connected on first use as a harness starts its servers. */
async function mcpClient(sessionId) {
  const current = session(sessionId);
  if (current.mcp) return current.mcp;
  const server = current.mcpServers.find((s) => typeof s.command === "string");
  if (!server) throw RequestError.invalidParams(undefined, "this session has no stdio MCP server");
  const client = new Client({ name: "fake-harness", version: "1.0.0" });
  const env = Object.fromEntries((server.env ?? []).map((e) => [e.name, e.value]));
  await client.connect(
    new StdioClientTransport({ command: server.command, args: server.args, env, stderr: "inherit" }),
  );
  current.mcp = { name: server.name, client };
  return current.mcp;
}

async function mcpTool(client, sessionId, rest) {
  const match = /^(\S+)\s*(\{.*\})?$/s.exec(rest.trim());
  if (!match) throw RequestError.invalidParams(undefined, "mcp <tool> <json arguments>");
  const [, name, json] = match;
  const rawInput = json ? JSON.parse(json) : {};
  const mcp = await mcpClient(sessionId);
  toolCalls += 1;
  const toolCallId = `call_${toolCalls}`;
  const title = `mcp__${mcp.name}__${name}`;
  await update(client, sessionId, {
    sessionUpdate: "tool_call",
    toolCallId,
    title,
    kind: "other",
    status: "pending",
    rawInput,
  });
  const { outcome } = await client.request(methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId, title, kind: "other", status: "pending", rawInput },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  });
  if (outcome.outcome !== "selected" || outcome.optionId !== "allow") {
    await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    return say(client, sessionId, `tool ${name} was not allowed`);
  }
  await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  const result = await mcp.client.callTool({ name, arguments: rawInput }, undefined, { timeout: 600_000 });
  const said = result.content.map((c) => (c.type === "text" ? c.text : JSON.stringify(c))).join("\n");
  await update(client, sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: result.isError ? "failed" : "completed",
    content: [{ type: "content", content: text(said) }],
  });
  return say(client, sessionId, `tool ${name}${result.isError ? " failed" : ""}: ${said}`);
}

/** Runs one script line; a stop reason ends the turn early. */
async function step(client, sessionId, line, turn) {
  const [, verb, rest = ""] = /^(\S+)\s*([\s\S]*)$/.exec(line) ?? [];
  switch (verb) {
    case "say":
      return say(client, sessionId, rest);
    case "think":
      await update(client, sessionId, { sessionUpdate: "agent_thought_chunk", content: text(rest) });
      return say(client, sessionId, "done thinking");
    case "tool":
      return tool(client, sessionId, rest, turn);
    case "mcp":
      return mcpTool(client, sessionId, rest);
    case "mcpall":
      await Promise.all(rest.split(" ;; ").map((call) => mcpTool(client, sessionId, call)));
      return undefined;
    case "tools": {
      const { tools } = await (await mcpClient(sessionId)).client.listTools();
      return say(client, sessionId, `tools: ${tools.map((t) => t.name).join(", ")}`);
    }
    case "read": {
      const { content } = await client.request(methods.client.fs.readTextFile, {
        sessionId,
        path: rest.trim(),
      });
      return say(client, sessionId, content);
    }
    case "write": {
      const [, path, content = ""] = /^(\S+)\s?([\s\S]*)$/.exec(rest) ?? [];
      await client.request(methods.client.fs.writeTextFile, { sessionId, path, content });
      return say(client, sessionId, `wrote ${path}`);
    }
    case "run": {
      const [command, ...args] = rest.trim().split(/\s+/);
      const result = await runTerminal(client, sessionId, command, args);
      return say(client, sessionId, `${result.output}[exit ${result.exitCode ?? result.signal}]`);
    }
    case "slow": {
      await say(client, sessionId, "working");
      const until = Date.now() + Number(rest);
      while (Date.now() < until) {
        if (turn.signal.aborted) return "cancelled";
        await sleep(Math.min(20, until - Date.now()));
      }
      return say(client, sessionId, "slept");
    }
    case "crash":
      return process.exit(137);
    case "env": {
      // Whether the harness was started with a variable, never its value.
      const value = process.env[rest.trim()];
      return say(
        client,
        sessionId,
        `${rest.trim()} is ${value ? `set (${value.length} characters)` : "unset"}`,
      );
    }
    case "usage": {
      const [used = "1234", size = "200000"] = rest.trim().split(/\s+/).filter(Boolean);
      return update(client, sessionId, {
        sessionUpdate: "usage_update",
        used: Number(used),
        size: Number(size),
        cost: { amount: 0.0123, currency: "USD" },
      });
    }
    case "tokens": {
      const [input = "0", output = "0"] = rest.trim().split(/\s+/);
      turn.tokens = {
        inputTokens: Number(input),
        outputTokens: Number(output),
        cachedReadTokens: 0,
        cachedWriteTokens: 0,
      };
      turn.tokens.totalTokens = turn.tokens.inputTokens + turn.tokens.outputTokens;
      return;
    }
    case "stop":
      return rest.trim();
    case "fail":
      throw RequestError.internalError(undefined, rest);
    default:
      return say(client, sessionId, `echo: ${line}`);
  }
}

agent({ name: "fake-harness" })
  .onRequest(methods.agent.initialize, async () => {
    if (process.env.FAKE_HARNESS_FAIL_INIT === "1") {
      process.stderr.write(
        `fake harness: failing at initialize as asked${process.env.FAKE_HARNESS_FAIL_NOTE ?? ""}\n`,
      );
      process.exit(3);
    }
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true, promptCapabilities: {} },
      agentInfo: { name: "fake-harness", version: "1.0.0" },
      authMethods: [],
    };
  })
  .onRequest(methods.agent.session.new, async ({ params }) => {
    const cwd = absoluteCwd(params.cwd);
    const drops = Number(process.env.FAKE_HARNESS_DROP_BEFORE_NEW ?? 0);
    if (drops > 0) {
      const counter = join(stateDir(cwd), "drops");
      const dropped = existsSync(counter) ? Number(readFileSync(counter, "utf8")) : 0;
      if (dropped < drops) {
        writeFileSync(counter, String(dropped + 1));
        process.exit(4);
      }
    }
    const sessionId = `fake_${randomUUID()}`;
    sessions.set(sessionId, { cwd, turn: null, mcpServers: params.mcpServers ?? [], mcp: null });
    writeFileSync(historyFile(cwd, sessionId), "");
    return { sessionId };
  })
  .onRequest(methods.agent.session.load, async ({ params, client }) => {
    const cwd = absoluteCwd(params.cwd);
    const { sessionId } = params;
    if (!SESSION_ID.test(sessionId) || !existsSync(historyFile(cwd, sessionId))) {
      throw RequestError.sessionNotFound(String(sessionId));
    }
    const lines = readFileSync(historyFile(cwd, sessionId), "utf8").split("\n").filter(Boolean);
    for (const line of lines) {
      await client.notify(methods.client.session.update, { sessionId, update: JSON.parse(line) });
    }
    sessions.set(sessionId, { cwd, turn: null, mcpServers: params.mcpServers ?? [], mcp: null });
    return {};
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    const current = session(sessionId);
    const turn = new AbortController();
    current.turn = turn;
    try {
      const prompt = params.prompt
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("\n");
      await update(client, sessionId, { sessionUpdate: "user_message_chunk", content: text(prompt) });
      for (const line of prompt.split("\n").map((l) => l.trim())) {
        if (line === "") continue;
        if (turn.signal.aborted) return { stopReason: "cancelled" };
        const stopReason = await step(client, sessionId, line, turn);
        if (typeof stopReason === "string") return { stopReason, ...reported(turn) };
      }
      return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn", ...reported(turn) };
    } finally {
      current.turn = null;
    }
  })
  .onNotification(methods.agent.session.cancel, async ({ params }) => {
    sessions.get(params.sessionId)?.turn?.abort();
  })
  .connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)))
  .closed.then(() => process.exit(0));
