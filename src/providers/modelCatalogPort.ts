/** Which provider a turn naming a model goes to. */
export type ModelRoute = "anthropic" | "openai" | "offline" | "a2a" | "acp";

/** One model a client may name, and which provider answers it. */
export interface ModelListing {
  id: string;
  displayName: string;
  /** Epoch ms; the provider's release date where it says, else when this server started. */
  createdAt: number;
  provider: ModelRoute;
  maxInputTokens: number | null;
  maxTokens: number | null;
}

/**
 * The models behind `GET /v1/models`: a port the edge reads (this file only) and the providers
 * context implements (`modelCatalog.ts`), so no edge imports a provider.
 */
export interface ModelCatalog {
  /** Every model the configured providers serve, then the built-in offline model. */
  list(): Promise<ModelListing[]>;
  /** The model and where a turn naming it goes; null when its configured provider does not serve it. */
  retrieve(id: string): Promise<ModelListing | null>;
}
