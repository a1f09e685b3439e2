import type { EdgeAdapter } from "../http/edgeAdapter.js";
import { answerMcpError } from "./mcpErrors.js";
import { MCP_PATH, mcpRoutes } from "./mcpRoute.js";

/**
 * MCP (Streamable HTTP): the workspace's agents as tools of one MCP server. A tool call is a turn;
 * an approval inside it is an elicitation (see `agentToolServer.ts`).
 */
export const mcpEdge: EdgeAdapter = {
  name: "mcp",
  pathPrefixes: [MCP_PATH],
  register(app, services) {
    mcpRoutes(app, services);
  },
  answerError: answerMcpError,
};
