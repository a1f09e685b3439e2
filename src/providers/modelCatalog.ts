import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { a2aCardUrl, isA2aModel } from "../kernel/a2aModel.js";
import { ACP_MODEL_PREFIX, acpRuntimeName, isAcpModel } from "../kernel/acpModel.js";
import { type Clock, systemClock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import { ANTHROPIC_DEFAULT_BASE_URL } from "./anthropicProvider.js";
import type { ModelCatalog, ModelListing, ModelRoute } from "./modelCatalogPort.js";
import { OPENAI_DEFAULT_BASE_URL } from "./openaiProvider.js";
import { providerSettings } from "./providerSettings.js";
import { modelFamily } from "./router.js";

/** What the model list shows of an ACP runtime (the catalog's definition, narrowed). */
export interface AcpRuntimeListing {
  name: string;
  description: string;
}

/** The built-in model's own id; every id no configured provider serves is answered by it too. */
export const OFFLINE_MODEL_ID = "offline";
/** How long a provider's list is reused: it changes with releases, not per request. */
const LIST_TTL_MS = 5 * 60_000;

/**
 * The models behind `GET /v1/models`, from the same variables as the router (`router.ts`): with a
 * provider key, that provider's own model list (read once per TTL, through its SDK); without one,
 * that family is answered offline, and says so. A provider whose list cannot be read fails the
 * request with a retryable error naming the provider, rather than a list that silently lacks it.
 */
export function createModelCatalog(
  env: NodeJS.ProcessEnv,
  clock: Clock = systemClock,
  /**
   * The ACP runtimes this server knows: `acp:<name>` retrieves as answered by its harness. Not in
   * the list, like `a2a:` ids: a Brain no provider serves (the list stays the providers' models).
   */
  acpRuntimes: readonly AcpRuntimeListing[] = [],
): ModelCatalog {
  const startedAt = clock.now();
  const settings = providerSettings(env);
  const sources: Array<{ route: ModelRoute; read: () => Promise<ModelListing[]> }> = [];
  if (settings.anthropicKey) {
    const client = new Anthropic({
      apiKey: settings.anthropicKey,
      baseURL: settings.anthropicBaseURL ?? ANTHROPIC_DEFAULT_BASE_URL,
      maxRetries: 1,
    });
    sources.push({ route: "anthropic", read: cached(clock, () => anthropicModels(client)) });
  }
  if (settings.openaiKey) {
    const client = new OpenAI({
      apiKey: settings.openaiKey,
      baseURL: settings.openaiBaseURL ?? OPENAI_DEFAULT_BASE_URL,
      maxRetries: 1,
    });
    sources.push({ route: "openai", read: cached(clock, () => openaiModels(client)) });
  }
  const offline = (id: string): ModelListing => ({
    id,
    displayName: id === OFFLINE_MODEL_ID ? "Offline model (built in)" : `${id} (answered offline)`,
    createdAt: startedAt,
    provider: "offline",
    maxInputTokens: null,
    maxTokens: null,
  });
  const read = async (source: (typeof sources)[number]) => {
    try {
      return await source.read();
    } catch (error) {
      throw new AwakenError(
        "unavailable",
        `The ${source.route} provider's model list could not be read (${describe(error)}); try again.`,
        { cause: error },
      );
    }
  };
  const acp = (runtime: AcpRuntimeListing): ModelListing => ({
    ...offline(`${ACP_MODEL_PREFIX}${runtime.name}`),
    displayName: `ACP harness: ${runtime.description}`,
    provider: "acp",
  });
  return {
    async list() {
      const lists = await Promise.all(sources.map(read));
      return [...lists.flat(), offline(OFFLINE_MODEL_ID)];
    },
    async retrieve(id) {
      // An ACP runtime is a Brain no provider lists: the known ones are answered here, others nowhere.
      if (isAcpModel(id)) {
        const name = acpRuntimeName(id);
        const runtime = acpRuntimes.find((r) => r.name === name);
        return runtime ? acp(runtime) : null;
      }
      // A remote A2A agent is a Brain no provider lists: valid ids are answered there, others nowhere.
      if (isA2aModel(id)) {
        const card = a2aCardUrl(id);
        return card === null
          ? null
          : { ...offline(id), displayName: `Remote A2A agent (${new URL(card).host})`, provider: "a2a" };
      }
      const family = modelFamily(id);
      const source = sources.find((s) => s.route === family);
      if (!source) return offline(id);
      return (await read(source)).find((m) => m.id === id) ?? null;
    },
  };
}

async function anthropicModels(client: Anthropic): Promise<ModelListing[]> {
  const out: ModelListing[] = [];
  for await (const model of client.models.list({ limit: 1000 })) {
    out.push({
      id: model.id,
      displayName: model.display_name,
      createdAt: Date.parse(model.created_at) || 0,
      provider: "anthropic",
      maxInputTokens: model.max_input_tokens ?? null,
      maxTokens: model.max_tokens ?? null,
    });
  }
  return out;
}

/** OpenAI lists every model a key can use; only the chat families the router sends there count. */
async function openaiModels(client: OpenAI): Promise<ModelListing[]> {
  const out: ModelListing[] = [];
  for await (const model of client.models.list()) {
    if (modelFamily(model.id) !== "openai") continue;
    out.push({
      id: model.id,
      displayName: model.id,
      createdAt: model.created * 1000,
      provider: "openai",
      maxInputTokens: null,
      maxTokens: null,
    });
  }
  return out;
}

/** One read per TTL, shared by concurrent callers; a failed read is not kept. */
function cached<T>(clock: Clock, read: () => Promise<T>): () => Promise<T> {
  let entry: { value: Promise<T>; until: number } | null = null;
  return () => {
    const now = clock.now();
    if (entry && entry.until > now) return entry.value;
    const value = read();
    const current = { value, until: now + LIST_TTL_MS };
    entry = current;
    value.catch(() => {
      if (entry === current) entry = null;
    });
    return value;
  };
}

/** The provider's status, never its message body (which could echo a key or a URL). */
function describe(error: unknown): string {
  const status = (error as { status?: unknown }).status;
  if (typeof status === "number") return `HTTP ${status}`;
  return error instanceof Error && error.name ? error.name : "no answer";
}
