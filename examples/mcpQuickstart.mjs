import Anthropic from "@anthropic-ai/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.AWAKEN_URL ?? "http://127.0.0.1:4600";
const apiKey = process.env.AWAKEN_API_KEY;

// Every active agent of the workspace is one tool of the MCP server at /v1/mcp.
const client = new Anthropic({ baseURL: url, apiKey });
const agent = await client.beta.agents.create({ name: "MCP helper", model: "claude-sonnet-4-6" });

const mcp = new Client({ name: "quickstart", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), {
  requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
});
await mcp.connect(transport);
const { tools } = await mcp.listTools();
const tool = tools.find((t) => t.name.endsWith(agent.id.replace(/^agent_/, "")));

// A call is one turn; its session_id continues the conversation in a later call.
const first = await mcp.callTool({ name: tool.name, arguments: { message: "Hello from MCP" } });
console.log("assistant:", first.content[0].text);
const { session_id } = first.structuredContent;
const second = await mcp.callTool({ name: tool.name, arguments: { message: "And again", session_id } });
console.log("stop_reason:", second.structuredContent.stop_reason);

// The same session, read over the Managed Agents API.
for await (const event of client.beta.sessions.events.list(session_id)) {
  if (event.type === "user.message" || event.type === "agent.message") console.log(event.type);
}
await transport.terminateSession();
await mcp.close();
