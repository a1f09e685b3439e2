/**
 * The official MCP SDK client over Streamable HTTP against the server's `/v1/mcp`, with the
 * workspace API key as bearer; optionally declaring elicitation with the test's form handler.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { TEST_API_KEY } from "./testServer.js";

export interface McpTestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Resolves at the next `notifications/tools/list_changed`. */
  nextListChanged(): Promise<void>;
  close(): Promise<void>;
}

export async function connectMcp(
  baseUrl: string,
  options: {
    elicit?: (request: ElicitRequest) => Promise<ElicitResult>;
    apiKey?: string;
    /** Sent on every request (a `traceparent`, say). */
    headers?: Record<string, string>;
  } = {},
): Promise<McpTestClient> {
  const client = new Client(
    { name: "awaken-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  const { elicit } = options;
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request));
  let waiters: Array<() => void> = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/v1/mcp`), {
    requestInit: {
      headers: { ...options.headers, authorization: `Bearer ${options.apiKey ?? TEST_API_KEY}` },
    },
  });
  await client.connect(transport);
  return {
    client,
    transport,
    nextListChanged: () => new Promise<void>((resolve) => waiters.push(resolve)),
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
