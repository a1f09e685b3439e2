/** OpenAI chat completions behind the provider port, via the official SDK's streaming call. */
import OpenAI from "openai";
import { toOpenAIParams } from "./openaiMapping.js";
import { OpenAIStreamAccumulator } from "./openaiStream.js";
import { type ModelProvider, ProviderError } from "./ports.js";
import {
  abortedError,
  classifyFailure,
  connectionFailureMessage,
  endpointUrl,
  messageOf,
} from "./providerFailure.js";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIProviderOptions {
  apiKey: string;
  baseURL?: string;
}

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const where = {
    url: endpointUrl(options.baseURL ?? OPENAI_DEFAULT_BASE_URL, "/chat/completions"),
    secret: options.apiKey,
  };
  const client = new OpenAI({
    apiKey: options.apiKey,
    // Always explicit: left unset, the SDK would consult OPENAI_BASE_URL itself.
    baseURL: options.baseURL ?? OPENAI_DEFAULT_BASE_URL,
    // Retries belong to the runtime, which backs off and records every attempt.
    maxRetries: 0,
  });

  return {
    name: "openai",
    async complete(request, { signal, onEvent }) {
      if (signal.aborted) throw abortedError("openai");
      try {
        const stream = await client.chat.completions.create(toOpenAIParams(request), { signal });
        const accumulator = new OpenAIStreamAccumulator(onEvent);
        for await (const chunk of stream) accumulator.add(chunk);
        // The SDK ends iteration quietly when the signal aborts mid-stream; it does not throw.
        if (signal.aborted) throw abortedError("openai");
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
  if (signal.aborted || error instanceof OpenAI.APIUserAbortError) return abortedError("openai", error);
  if (error instanceof ProviderError) return error;
  // The SDK says only "Connection error.": the refused port, unknown host or TLS failure is its cause.
  if (error instanceof OpenAI.APIConnectionError) {
    return classifyFailure({
      provider: "openai",
      status: undefined,
      errorType: undefined,
      message: connectionFailureMessage(error),
      cause: error,
      ...where,
    });
  }
  if (error instanceof OpenAI.APIError) {
    // `error.error` is the body's inner `error` object; its message is the provider's own words.
    // An error chunk inside the stream arrives as an APIError without a status.
    return classifyFailure({
      provider: "openai",
      status: error.status,
      errorType: error.type,
      message: messageOf(error.error) ?? error.message,
      cause: error,
      ...where,
    });
  }
  // Anything else escaped the SDK while reading the body: the connection broke mid-stream.
  return classifyFailure({
    provider: "openai",
    status: undefined,
    errorType: undefined,
    message: error instanceof Error ? error.message : String(error),
    cause: error,
    ...where,
  });
}
