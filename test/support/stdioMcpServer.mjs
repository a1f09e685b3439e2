// A stdio MCP server made with the official SDK, for the tests of stdio MCP servers run in a
// session's sandbox. Bundled into one file (the sandbox sees no node_modules) and run as
// `node server.mjs --expect-sha256 <hex> --marker <text>`: the marker names the process so a test
// can find it in /proc; the hash is how `check_token` says whether NOTES_TOKEN arrived, without
// the token ever being in its answer.
import { createHash } from "node:crypto";
import { appendFileSync, existsSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const expected = option("--expect-sha256");
const token = process.env.NOTES_TOKEN;

// What a careless server does: its environment on stderr. The host must never log or show it.
process.stderr.write(`stdio test server starting with NOTES_TOKEN=${token ?? "(unset)"}\n`);

const server = new McpServer({ name: "stdio-notes", version: "1.0.0" });
server.registerTool(
  "check_token",
  { description: "Says whether NOTES_TOKEN reached this process", inputSchema: {} },
  async () => {
    const digest = token === undefined ? null : createHash("sha256").update(token).digest("hex");
    const text = `token: ${token === undefined ? "absent" : "present"}, matches: ${digest === expected}, level: ${process.env.LOG_LEVEL ?? "unset"}, cwd: ${process.cwd()}`;
    return { content: [{ type: "text", text }] };
  },
);
server.registerTool(
  "note",
  { description: "Keeps a note", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text: `noted: ${text}` }] }),
);
// Held calls, for crash tests: each start is a line of calls.log in the working directory (the
// session's workspace); the call answers once a file named `release` appears there.
const held = async (text) => {
  appendFileSync("calls.log", `${text}\n`);
  while (!existsSync("release")) await new Promise((resolve) => setTimeout(resolve, 20));
  return { content: [{ type: "text", text: `appended: ${text}` }] };
};
server.registerTool(
  "append",
  { description: "Appends a line (not safe to repeat)", inputSchema: { text: z.string() } },
  async ({ text }) => held(text),
);
server.registerTool(
  "append_again",
  {
    description: "Appends a line (safe to repeat)",
    inputSchema: { text: z.string() },
    annotations: { idempotentHint: true },
  },
  async ({ text }) => held(text),
);
await server.connect(new StdioServerTransport());
