/**
 * A deterministic model that needs no key or network, so the platform works out of the box and
 * tests can drive whole turns. It streams like a real provider: word deltas, abortable, with an
 * optional per-delta delay (AWAKEN_OFFLINE_DELAY_MS) that keeps a turn in flight for crash tests.
 */
import { offlineReply } from "./offlineScript.js";
import type { ModelProvider, ModelResponse, ModelStreamEvent } from "./ports.js";
import { abortedError } from "./providerFailure.js";
import { estimateRequestTokens } from "./tokenEstimate.js";

export function createOfflineProvider(): ModelProvider {
  return {
    name: "offline",
    async complete(request, { signal, onEvent }): Promise<ModelResponse> {
      if (signal.aborted) throw abortedError("offline");
      // Read per call so a test can set the variable after the provider was built.
      const delayMs = deltaDelayMs(process.env.AWAKEN_OFFLINE_DELAY_MS);
      const reply = offlineReply(request);
      const step = async (event: ModelStreamEvent) => {
        if (delayMs > 0) await sleep(delayMs, signal);
        if (signal.aborted) throw abortedError("offline");
        onEvent(event);
      };
      let toolUses = 0;
      for (const [index, block] of reply.content.entries()) {
        if (block.type === "text") {
          for (const word of block.text.match(/\s*\S+\s*|\s+/g) ?? []) {
            await step({ type: "text_delta", index, text: word });
          }
          continue;
        }
        // Tool input streams as JSON fragments too, so previews of calls work without a key.
        const ordinal = toolUses++;
        await step({ type: "tool_input_start", index: ordinal, id: block.id, name: block.name });
        for (const fragment of jsonFragments(JSON.stringify(block.input))) {
          await step({ type: "tool_input_delta", index: ordinal, partialJson: fragment });
        }
      }
      return {
        content: reply.content,
        stopReason: reply.stopReason,
        usage: {
          inputTokens: estimateRequestTokens(request),
          outputTokens: Math.ceil(outputCharacters(reply.content) / 4),
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
        },
      };
    },
  };
}

/** Splits JSON text into short fragments, as a real model's tool-input stream arrives. */
function jsonFragments(json: string): string[] {
  const fragments: string[] = [];
  for (let start = 0; start < json.length; start += JSON_FRAGMENT_CHARS) {
    fragments.push(json.slice(start, start + JSON_FRAGMENT_CHARS));
  }
  return fragments;
}

const JSON_FRAGMENT_CHARS = 12;

function deltaDelayMs(raw: string | undefined): number {
  const value = Number(raw);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError("offline"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function outputCharacters(content: ModelResponse["content"]): number {
  let total = 0;
  for (const block of content) {
    total +=
      block.type === "text" ? block.text.length : block.name.length + JSON.stringify(block.input).length;
  }
  return total;
}
