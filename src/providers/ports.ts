/**
 * Model inference behind one interface. The runtime speaks these provider-neutral shapes; each
 * provider maps them to its own wire (Anthropic Messages, OpenAI chat completions, offline script).
 * Nothing here knows about sessions, threads or history storage.
 */

import { PlatformError } from "../kernel/errors.js";

export type ModelContentBlock =
  | { type: "text"; text: string }
  | {
      type: "image";
      source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
    }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: Array<{ type: "text"; text: string }>;
      is_error: boolean;
    };

export interface ModelMessage {
  role: "user" | "assistant";
  content: ModelContentBlock[];
}

export interface ModelToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ModelRequest {
  /** The agent's model id, e.g. `claude-sonnet-4-6`, `gpt-4o-mini`, `offline-echo`. */
  model: string;
  system: string | null;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  maxTokens: number;
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

export type ModelStopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "stop_sequence";

/**
 * Streaming evidence while the model answers; never stored. For text, `index` is the text block's
 * position in the returned content; for tool input, the tool use's position among the returned
 * tool uses (0 = the first `tool_use` block), so a listener can name the call before it is whole;
 * for thinking, the thinking block's position among the answer's thinking blocks.
 */
export type ModelStreamEvent =
  | { type: "text_delta"; index: number; text: string }
  | { type: "thinking_delta"; index: number; text: string }
  /** `id` is the provider's tool-use id when the wire has sent it by then. */
  | { type: "tool_input_start"; index: number; id?: string; name: string }
  /** A fragment of the tool input's JSON text; only the whole input parses. */
  | { type: "tool_input_delta"; index: number; partialJson: string };

export interface ModelResponse {
  /** Text and tool_use blocks in the order the model produced them. */
  content: Array<
    | { type: "text"; text: string }
    | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  >;
  stopReason: ModelStopReason;
  usage: ModelUsage;
}

export interface ModelCallOptions {
  signal: AbortSignal;
  onEvent: (event: ModelStreamEvent) => void;
}

export interface ModelProvider {
  /** Stable provider name recorded on every model request span: `anthropic`, `openai`, `offline`. */
  readonly name: string;
  complete(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
  /**
   * The most output tokens `model` accepts, as the provider's own model list says (null: it does
   * not say, or the list could not be read). Absent: the provider has no such list.
   */
  outputLimit?(model: string): Promise<number | null>;
}

/** Chooses the provider for a model id; the choice is recorded on the model request span. */
export interface ProviderRouter {
  select(model: string): ModelProvider;
  /** The model's context window in tokens (`contextWindows.ts`): what a request may hold at most. */
  contextWindow(model: string): number;
  /** One line per configured provider, for start-up logs. */
  describe(): string[];
}

export type ProviderErrorKind = "overloaded" | "rate_limited" | "request_failed" | "aborted";

/**
 * Thrown by providers. `transient` errors (overload, rate limit, 5xx, connection loss) are retried
 * with backoff by the runtime; others end the turn.
 */
export class ProviderError extends PlatformError<ProviderErrorKind> {
  readonly kind: ProviderErrorKind;
  /** The same as `retryable`: the name the runtime's retry decision reads. */
  readonly transient: boolean;
  readonly status: number | undefined;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    options: { transient: boolean; status?: number; cause?: unknown },
  ) {
    super(kind, message, { retryable: options.transient, cause: options.cause });
    this.name = "ProviderError";
    this.kind = kind;
    this.transient = options.transient;
    this.status = options.status;
  }
}
