/** The Anthropic Messages API behind the provider port, via the official SDK's streaming call. */
import Anthropic from "@anthropic-ai/sdk";
import { toAnthropicParams } from "./anthropicMapping.js";
import { AnthropicStreamAccumulator } from "./anthropicStream.js";
import { type ModelProvider, ProviderError } from "./ports.js";
import { abortedError, classifyFailure, connectionFailureMessage, endpointUrl } from "./providerFailure.js";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

export interface AnthropicProviderOptions {
  apiKey: string;
  baseURL?: string;
}

export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const where = {
    url: endpointUrl(options.baseURL ?? ANTHROPIC_DEFAULT_BASE_URL, "/v1/messages"),
    secret: options.apiKey,
  };
  const client = new Anthropic({
    apiKey: options.apiKey,
    // Always explicit: left unset, the SDK would consult ANTHROPIC_BASE_URL and local profiles.
    baseURL: options.baseURL ?? ANTHROPIC_DEFAULT_BASE_URL,
    // Retries belong to the runtime, which backs off and records every attempt.
    maxRetries: 0,
  });

  const limits = outputLimits(client);
  return {
    name: "anthropic",
    outputLimit: limits,
    async complete(request, { signal, onEvent }) {
      if (signal.aborted) throw abortedError("anthropic");
      try {
        const stream = await client.messages.create(toAnthropicParams(request), { signal });
        const accumulator = new AnthropicStreamAccumulator(onEvent);
        for await (const event of stream) accumulator.add(event);
        // The SDK ends iteration quietly when the signal aborts mid-stream; it does not throw.
        if (signal.aborted) throw abortedError("anthropic");
        return accumulator.finish();
      } catch (error) {
        throw toProviderError(error, signal, where);
      }
    },
  };
}

function toProviderError(
  error: unknown,
  signal: AbortSignal,
  where: { url: string; secret: string },
): ProviderError {
  if (signal.aborted || error instanceof Anthropic.APIUserAbortError) return abortedError("anthropic", error);
  if (error instanceof ProviderError) return error;
  // The SDK says only "Connection error.": the refused port, unknown host or TLS failure is its cause.
  if (error instanceof Anthropic.APIConnectionError) {
    return classifyFailure({
      provider: "anthropic",
      status: undefined,
      errorType: undefined,
      message: connectionFailureMessage(error),
      cause: error,
      ...where,
    });
  }
  if (error instanceof Anthropic.APIError) {
    // An `event: error` inside the stream arrives as an APIError without a status.
    return classifyFailure({
      provider: "anthropic",
      status: error.status,
      errorType: error.type,
      message: error.apiMessage ?? error.message,
      cause: error,
      ...where,
    });
  }
  // Anything else escaped the SDK while reading the body: the connection broke mid-stream.
  return classifyFailure({
    provider: "anthropic",
    status: undefined,
    errorType: undefined,
    message: error instanceof Error ? error.message : String(error),
    cause: error,
    ...where,
  });
}

/** How long the model list's limits are reused: they change with releases, not per request. */
const LIMITS_TTL_MS = 5 * 60_000;

/**
 * Each model's `max_tokens` from the Models API list, read once per TTL and shared by concurrent
 * turns; a failed read answers null (the turn uses its default) and is not kept.
 */
function outputLimits(client: Anthropic): (model: string) => Promise<number | null> {
  let entry: { limits: Promise<Map<string, number>>; until: number } | null = null;
  const read = async () => {
    const limits = new Map<string, number>();
    // Bounded: a turn waits on this read before its model request.
    for await (const model of client.models.list({ limit: 1000 }, { timeout: 10_000 })) {
      if (typeof model.max_tokens === "number" && model.max_tokens > 0)
        limits.set(model.id, model.max_tokens);
    }
    return limits;
  };
  return async (model) => {
    const now = Date.now();
    if (!entry || entry.until <= now) {
      const current = { limits: read(), until: now + LIMITS_TTL_MS };
      entry = current;
      current.limits.catch(() => {
        if (entry === current) entry = null;
      });
    }
    try {
      return (await entry.limits).get(model) ?? null;
    } catch {
      return null;
    }
  };
}
