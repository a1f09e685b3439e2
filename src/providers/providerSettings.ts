/** The model providers an environment configures: their keys and base URLs (empty counts as unset). */
export interface ProviderSettings {
  anthropicKey: string | undefined;
  openaiKey: string | undefined;
  anthropicBaseURL: string | undefined;
  openaiBaseURL: string | undefined;
}

export function providerSettings(env: NodeJS.ProcessEnv): ProviderSettings {
  // An empty variable counts as unset: `FOO= awaken up` should not try a blank key.
  return {
    anthropicKey: env.ANTHROPIC_API_KEY || undefined,
    openaiKey: env.OPENAI_API_KEY || undefined,
    anthropicBaseURL: env.ANTHROPIC_BASE_URL || undefined,
    openaiBaseURL: env.OPENAI_BASE_URL || undefined,
  };
}
