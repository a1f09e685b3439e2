/**
 * Raw SSE responses read in the background, for tests that watch a stream's frames and its end
 * (when the server closes it): the hint stream, an MCP session's GET stream.
 */
export interface SseStream {
  status: number;
  readonly frames: string[];
  readonly ended: boolean;
  /** Resolves with the first frame that matches, or fails after `timeoutMs`. */
  until(predicate: (frame: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Waits until the server ends the stream, or fails after `timeoutMs`. */
  end(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openSse(
  url: string,
  key: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const frames: string[] = [];
  let ended = false;
  let wake: () => void = () => {};
  const changed = () => wake();
  const done = (async () => {
    try {
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          frames.push(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf("\n\n");
        }
        changed();
      }
    } catch {
      // Aborted by `close`, or the connection dropped: the stream ended either way.
    } finally {
      ended = true;
      changed();
    }
  })();
  const waitFor = async (ready: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what} within ${timeoutMs} ms; saw ${frames.length} frames`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return {
    status: response.status,
    frames,
    get ended() {
      return ended;
    },
    async until(predicate, timeoutMs = 5_000) {
      await waitFor(() => frames.some(predicate), timeoutMs, "no matching frame");
      return frames.find(predicate) as string;
    },
    async end(timeoutMs = 5_000) {
      await waitFor(() => ended, timeoutMs, "stream still open");
    },
    async close() {
      controller.abort();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
      clearTimeout(timer);
    },
  };
}

const MCP_PROTOCOL_VERSION = "2025-11-25";

function mcpPost(url: string, key: string, body: unknown, sessionId?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MCP_PROTOCOL_VERSION,
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** A raw MCP `initialize` (and `notifications/initialized` when it opened a session). */
export async function initializeMcp(
  baseUrl: string,
  key: string,
): Promise<{ status: number; sessionId: string | null; body: string }> {
  const url = `${baseUrl}/v1/mcp`;
  const initialized = await mcpPost(url, key, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: MCP_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "awaken-test", version: "1.0.0" },
    },
  });
  const body = await initialized.text();
  const sessionId = initialized.headers.get("mcp-session-id");
  if (sessionId)
    await (
      await mcpPost(url, key, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)
    ).text();
  return { status: initialized.status, sessionId, body };
}

/**
 * An MCP session initialized over raw Streamable HTTP, with its GET stream open: the official
 * client keeps that stream to itself (and reconnects it), so a test that watches it end opens it here.
 */
export async function openMcpStream(
  baseUrl: string,
  key: string,
): Promise<{ sessionId: string; stream: SseStream; close(): Promise<void> }> {
  const url = `${baseUrl}/v1/mcp`;
  const { status, sessionId, body } = await initializeMcp(baseUrl, key);
  if (status !== 200 || !sessionId) throw new Error(`initialize: ${status} ${body}`);
  const stream = await openSse(url, key, {
    "mcp-session-id": sessionId,
    "mcp-protocol-version": MCP_PROTOCOL_VERSION,
  });
  const close = async () => {
    await stream.close();
    await fetch(url, {
      method: "DELETE",
      headers: { authorization: `Bearer ${key}`, "mcp-session-id": sessionId },
    }).catch(() => undefined);
  };
  if (stream.status !== 200) {
    await close();
    throw new Error(`GET stream: ${stream.status}`);
  }
  return { sessionId, stream, close };
}
