/**
 * Helpers shared by the SDK conformance tests. Everything goes over real HTTP: the official SDK for
 * what it can express, raw `fetch` only for what it cannot (bad JSON, missing auth, SSE framing).
 */
import type Anthropic from "@anthropic-ai/sdk";
import { expect } from "vitest";
import { TEST_API_KEY, type TestServer } from "./testServer.js";

/** A session event as the tests read it: the SDK types are unions; tests look at fields by name. */
export type WireEvent = { type: string; id: string } & Record<string, unknown>;

export const MODEL = "claude-sonnet-4-6";

export const WEATHER_TOOL = {
  type: "custom" as const,
  name: "get_weather",
  description: "Current weather for a city",
  input_schema: {
    type: "object" as const,
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

export function userMessage(text: string) {
  return { type: "user.message" as const, content: [{ type: "text" as const, text }] };
}

/** An agent (optionally with custom tools), a default environment and a fresh session. */
export async function createSession(
  client: Anthropic,
  options: { tools?: Array<typeof WEATHER_TOOL>; name?: string } = {},
) {
  const agent = await client.beta.agents.create({
    name: options.name ?? "Conformance",
    model: MODEL,
    ...(options.tools ? { tools: options.tools } : {}),
  });
  const environment = await client.beta.environments.create({ name: "conformance" });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  return { agent, environment, session };
}

/** The whole history, following `next_page` with the SDK's auto-pagination. */
export async function history(client: Anthropic, sessionId: string): Promise<WireEvent[]> {
  const events: WireEvent[] = [];
  for await (const event of client.beta.sessions.events.list(sessionId, { limit: 1000 })) {
    events.push(event as unknown as WireEvent);
  }
  return events;
}

export function textOf(event: WireEvent | undefined): string {
  const content = (event?.content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((block) => block.text ?? "").join("");
}

export function stopReason(event: WireEvent | undefined): { type: string; event_ids?: string[] } | undefined {
  return event?.stop_reason as { type: string; event_ids?: string[] } | undefined;
}

export const isEndTurnIdle = (e: WireEvent) =>
  e.type === "session.status_idle" && stopReason(e)?.type === "end_turn";
export const isActionIdle = (e: WireEvent) =>
  e.type === "session.status_idle" && stopReason(e)?.type === "requires_action";

export const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** Every item of an SDK list, following `next_page` (auto-pagination). */
export async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export const idsOf = (items: ReadonlyArray<{ id: string }>): string[] => items.map((item) => item.id);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads an SDK event stream in the background, so a test can wait for a condition with a deadline
 * or check that nothing arrived within a window.
 */
export class StreamReader {
  readonly events: WireEvent[] = [];
  ended = false;
  error: unknown = null;
  private waiters: Array<() => void> = [];
  private readonly done: Promise<void>;

  private constructor(private readonly stream: AsyncIterable<unknown> & { controller: AbortController }) {
    this.done = (async () => {
      try {
        for await (const event of this.stream) {
          this.events.push(event as WireEvent);
          this.wake();
        }
      } catch (error) {
        if (!this.stream.controller.signal.aborted) this.error = error;
      } finally {
        this.ended = true;
        this.wake();
      }
    })();
  }

  static async open(
    client: Anthropic,
    sessionId: string,
    params: { event_deltas?: Array<"agent.message" | "agent.thinking"> } = {},
  ): Promise<StreamReader> {
    return new StreamReader(await client.beta.sessions.events.stream(sessionId, params));
  }

  /** One thread's stream (`sessions.threads.events.stream`). */
  static async openThread(
    client: Anthropic,
    sessionId: string,
    threadId: string,
    params: { event_deltas?: Array<"agent.message" | "agent.thinking"> } = {},
  ): Promise<StreamReader> {
    return new StreamReader(
      await client.beta.sessions.threads.events.stream(threadId, { session_id: sessionId, ...params }),
    );
  }

  /** Resolves with the first event (from `from` on) that matches, or fails after `timeoutMs`. */
  async until(
    predicate: (event: WireEvent) => boolean,
    options: { from?: number; timeoutMs?: number } = {},
  ): Promise<WireEvent> {
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    let index = options.from ?? 0;
    for (;;) {
      for (; index < this.events.length; index++) {
        const event = this.events[index] as WireEvent;
        if (predicate(event)) return event;
      }
      if (this.ended) throw new Error(`stream ended before the awaited event; saw ${this.types()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for an event; saw ${this.types()}`);
      await this.wait(left);
    }
  }

  /** Waits until the stream ends (the server closed it), or fails after `timeoutMs`. */
  async end(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`stream still open after ${timeoutMs} ms; saw ${this.types()}`);
      await this.wait(left);
    }
  }

  types(): string {
    return this.events.map((e) => e.type).join(", ") || "nothing";
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.stream.controller.abort();
    // An abort racing the server's own close can leave the SDK's iterator pending; never hang a test on it.
    await Promise.race([this.done, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Sends a message on an open stream and returns the turn's events up to its closing idle. */
export async function runTurn(
  client: Anthropic,
  reader: StreamReader,
  sessionId: string,
  text: string,
  idle: (e: WireEvent) => boolean = isEndTurnIdle,
): Promise<WireEvent[]> {
  const from = reader.events.length;
  const [echo] = (await client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] }))
    .data as unknown as WireEvent[];
  const start = await reader.until((e) => e.id === echo?.id, { from });
  const startIndex = reader.events.indexOf(start);
  const end = await reader.until(idle, { from: startIndex });
  return reader.events.slice(startIndex, reader.events.indexOf(end) + 1);
}

export const BAD_REQUEST = { status: 400, type: "invalid_request_error" } as const;
export const NOT_FOUND = { status: 404, type: "not_found_error" } as const;

type ApiErrorClass = abstract new (...args: never[]) => InstanceType<typeof Anthropic.APIError>;

/**
 * Asserts the wire's error envelope (§1.4) on a rejected SDK call: the SDK class, the status, the
 * `{type:"error", error:{type, message}, request_id}` body, a `request-id` header equal to the body's
 * `request_id`, and a message that contains every given fragment (what to fix).
 */
export async function expectApiError<C extends ApiErrorClass>(
  call: Promise<unknown>,
  errorClass: C,
  expected: { status: number; type: string; message?: Array<string | RegExp> },
): Promise<InstanceType<C>> {
  const error = await call.then(
    (value) => {
      throw new Error(`expected ${errorClass.name}, got a success: ${JSON.stringify(value).slice(0, 300)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(errorClass);
  const apiError = error as InstanceType<typeof Anthropic.APIError>;
  expect(apiError.status).toBe(expected.status);
  const body = apiError.error as {
    type: string;
    error: { type: string; message: string };
    request_id: string;
  };
  expect(body.type).toBe("error");
  expect(body.error.type).toBe(expected.type);
  expect(apiError.type).toBe(expected.type);
  expect(typeof body.error.message).toBe("string");
  expect(body.request_id).toMatch(/^req_/);
  expect(apiError.requestID).toBe(body.request_id);
  for (const fragment of expected.message ?? []) expect(body.error.message).toMatch(fragment);
  return error as InstanceType<C>;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A raw HTTP call for what the SDK cannot express. Authenticated with Bearer unless `headers` say otherwise. */
export async function rawRequest(
  t: TestServer,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; auth?: boolean } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {
    "anthropic-beta": "managed-agents-2026-04-01",
    "anthropic-version": "2026-10-21",
    ...(options.auth === false ? {} : { authorization: `Bearer ${TEST_API_KEY}` }),
    ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
    ...options.headers,
  };
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the raw text is the body
  }
  return { status: response.status, headers: response.headers, body };
}

/** The envelope checks of `expectApiError`, for a raw response. */
export function expectRawError(response: RawResponse, status: number, type: string): string {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = response.body as {
    type: string;
    error: { type: string; message: string };
    request_id: string;
  };
  expect(body.type).toBe("error");
  expect(body.error.type).toBe(type);
  expect(body.request_id).toMatch(/^req_/);
  expect(response.headers.get("request-id")).toBe(body.request_id);
  return body.error.message;
}

/**
 * Polls the history until `done` holds, for turns started where no stream could be open first
 * (e.g. `initial_events` at session creation).
 */
export async function waitForHistory(
  client: Anthropic,
  sessionId: string,
  done: (events: WireEvent[]) => boolean,
  timeoutMs = 10_000,
): Promise<WireEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await history(client, sessionId);
    if (done(events)) return events;
    if (Date.now() > deadline) {
      throw new Error(`history never matched; it holds ${events.map((e) => e.type).join(", ")}`);
    }
    await sleep(25);
  }
}
