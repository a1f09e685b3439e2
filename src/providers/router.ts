/**
 * Picks the provider for a model id from the environment. A missing key never fails a turn: the
 * model family falls back to the offline provider, and describe() says so at start-up.
 */
import { ANTHROPIC_DEFAULT_BASE_URL, createAnthropicProvider } from "./anthropicProvider.js";
import { contextWindowsFromEnv } from "./contextWindows.js";
import { createOfflineProvider } from "./offlineProvider.js";
import { createOpenAIProvider, OPENAI_DEFAULT_BASE_URL } from "./openaiProvider.js";
import type { ProviderRouter } from "./ports.js";
import { providerSettings } from "./providerSettings.js";

type Family = "anthropic" | "openai" | "other";

const OPENAI_PATTERNS = "gpt-*, o1*, o3*, o4*, chatgpt-*";

export function modelFamily(model: string): Family {
  const id = model.toLowerCase();
  if (id.startsWith("claude-")) return "anthropic";
  if (/^(?:gpt-|o1|o3|o4|chatgpt-)/.test(id)) return "openai";
  return "other";
}

export function createProviderRouter(env: NodeJS.ProcessEnv): ProviderRouter {
  const { anthropicKey, openaiKey, anthropicBaseURL, openaiBaseURL } = providerSettings(env);

  const windows = contextWindowsFromEnv(env);
  // Built once on first use; SDK clients hold connection pools worth reusing.
  const offline = once(createOfflineProvider);
  const anthropic = once(() =>
    anthropicKey ? createAnthropicProvider({ apiKey: anthropicKey, baseURL: anthropicBaseURL }) : offline(),
  );
  const openai = once(() =>
    openaiKey ? createOpenAIProvider({ apiKey: openaiKey, baseURL: openaiBaseURL }) : offline(),
  );

  return {
    select(model) {
      const family = modelFamily(model);
      if (family === "anthropic") return anthropic();
      if (family === "openai") return openai();
      return offline();
    },
    contextWindow: windows,
    describe() {
      return [
        anthropicKey
          ? `anthropic: ${displayURL(anthropicBaseURL ?? ANTHROPIC_DEFAULT_BASE_URL)} (claude-* models)`
          : "offline: claude-* models answer offline because ANTHROPIC_API_KEY is not set",
        openaiKey
          ? `openai: ${displayURL(openaiBaseURL ?? OPENAI_DEFAULT_BASE_URL)} (${OPENAI_PATTERNS} models)`
          : `offline: ${OPENAI_PATTERNS} models answer offline because OPENAI_API_KEY is not set`,
        "offline: all other models (e.g. offline-*) answer with the built-in offline model",
      ];
    },
  };
}

function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}

/** Base URLs can embed credentials (user:pass@ or ?key=); start-up logs must not show them. */
export function displayURL(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    url.search = "";
    return url.toString().replace(/\/$/, "");
  } catch {
    return "(unparseable base URL)";
  }
}
