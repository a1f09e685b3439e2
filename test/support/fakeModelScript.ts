/**
 * The scripted-reply interface shared by the fake Anthropic and OpenAI servers, plus the HTTP
 * plumbing they have in common. The server lives in the test process; the product under test (often
 * a child process) is pointed at `url` through ANTHROPIC_BASE_URL / OPENAI_BASE_URL.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export type ScriptedReply =
  | {
      kind: "text";
      text: string;
      chunkDelayMs?: number;
      usage?: ScriptedUsage;
      /** Defaults to end_turn; each wire spells it its own way (OpenAI: stop / length). */
      stopReason?: "end_turn" | "max_tokens";
      thinking?: string;
      /** The stream opens at once but its text waits for this (a call held mid flight, then answered). */
      heldUntil?: Promise<unknown>;
    }
  | {
      kind: "tool_use";
      name: string;
      input: Record<string, unknown>;
      id?: string;
      /** Text the model says before calling the tool. */
      text?: string;
      usage?: ScriptedUsage;
      /** Further tool uses in the same answer (parallel tool calls). */
      more?: Array<{ name: string; input: Record<string, unknown> }>;
      /**
       * Reasoning streamed before the answer: an Anthropic thinking block, an OpenAI-compatible
       * server's `reasoning_content` deltas.
       */
      thinking?: string;
    }
  | { kind: "error"; status: number; errorType?: string; message?: string }
  /** Starts a 200 stream, sends `text`, then an in-stream error event (Anthropic `event: error`). */
  | { kind: "stream_error"; text?: string; errorType?: string; message?: string }
  /** Starts a 200 stream, sends `text`, then destroys the socket without finishing. */
  | { kind: "drop"; text?: string }
  /** Sends headers and the opening event, then never finishes (until the client disconnects). */
  | { kind: "hang" };

export interface RecordedRequest {
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeModelServer {
  /** Base URL for the SDK / the product's *_BASE_URL variable (OpenAI's includes `/v1`). */
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  /** Used when the queue is empty; default: text echoing the last user text as `fake: <text>`. */
  setFallback(reply: ScriptedReply | ((body: Record<string, unknown>) => ScriptedReply)): void;
  /** Resolves once at least `count` requests have arrived (for tests that act mid-request). */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** The model ids `GET …/models` lists, or the HTTP status it fails with. */
  setModels(models: string[] | { status: number }): void;
  /** How many times the model list was read. */
  modelListReads(): number;
  close(): Promise<void>;
}

/** The provider's model list as its wire has it (`after_id`/`limit` from the query where it pages). */
export type ModelListWriter = (res: ServerResponse, ids: string[], query: URLSearchParams) => void;

/** What a wire module supplies: where it listens and how a scripted reply looks on its wire. */
export interface FakeWire {
  path: string;
  /** Path prefix included in `url` (OpenAI clients expect the base URL to end in `/v1`). */
  urlSuffix: string;
  lastUserText(body: Record<string, unknown>): string;
  /** `GET <modelsPath>` answers the model list. */
  modelsPath: string;
  writeModels: ModelListWriter;
  /** Writes the reply; resolves when the response is finished or abandoned. */
  write(
    res: ServerResponse,
    reply: ScriptedReply,
    body: Record<string, unknown>,
    serial: number,
  ): Promise<void>;
}

export async function startFakeModelServer(wire: FakeWire): Promise<FakeModelServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedReply[] = [];
  const waiters = new Set<() => void>();
  let models: string[] | { status: number } = [];
  let modelReads = 0;
  let fallback: (body: Record<string, unknown>) => ScriptedReply = (body) => ({
    kind: "text",
    text: `fake: ${wire.lastUserText(body)}`,
  });

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const path = url.pathname;
    if (req.method === "GET" && path === wire.modelsPath) {
      modelReads++;
      if (Array.isArray(models)) wire.writeModels(res, models, url.searchParams);
      else
        sendJson(res, models.status, {
          type: "error",
          error: { type: "api_error", message: "fake failure" },
        });
      return;
    }
    if (req.method !== "POST" || path !== wire.path) {
      sendJson(res, 404, { error: { message: `fake model server has no route ${req.method} ${path}` } });
      return;
    }
    const body = await readJson(req);
    requests.push({ body, headers: { ...req.headers } });
    for (const wake of waiters) wake();
    const reply = queue.shift() ?? fallback(body);
    await wire.write(res, reply, body, requests.length);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${wire.urlSuffix}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setModels(list) {
      models = list;
    },
    modelListReads: () => modelReads,
    setFallback(reply) {
      fallback = typeof reply === "function" ? reply : () => reply;
    },
    waitForRequests(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`fake model server saw ${requests.length} of ${count} requests`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      // Hanging streams would keep close() waiting forever; cut them.
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
  return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function startEventStream(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    ...headers,
  });
}

/** Resolves when the client goes away, so a hanging reply ends with its connection. */
export function untilClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) resolve();
    else res.once("close", () => resolve());
  });
}

/** Word-sized pieces (whitespace kept) so clients see several deltas per text. */
export function textChunks(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** Splits serialized JSON into a few fragments at arbitrary points, as real servers do. */
export function jsonFragments(json: string, parts = 3): string[] {
  const size = Math.max(1, Math.ceil(json.length / parts));
  const fragments: string[] = [];
  for (let i = 0; i < json.length; i += size) fragments.push(json.slice(i, i + size));
  return fragments;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value ?? "").length / 4);
}

/** Text of the last user message that has any, from either wire's `messages` array. */
export function lastUserTextOf(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (!isRecord(message) || message.role !== "user") continue;
    const text = textOf(message.content);
    if (text !== "") return text;
  }
  return "";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .flatMap((part: unknown) =>
      isRecord(part) && part.type === "text" && typeof part.text === "string" ? [part.text] : [],
    )
    .join("\n");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
