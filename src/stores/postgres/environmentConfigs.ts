import { BoundedCache } from "../../kernel/boundedCache.js";

/** Revisions a replica's sessions pin at once: a bound on memory, not a working size. */
const MAX_REVISIONS = 1_000;

/**
 * Environment revisions' configs as claims returned them. A revision never changes once stored, so
 * a config seen once is the config for good; an input append that claims its run for an idle slot
 * builds the activation with it instead of reading it (`appendHandOff`).
 */
export class EnvironmentConfigs {
  private readonly configs = new BoundedCache<string, string>({ maxEntries: MAX_REVISIONS });

  saw(environmentId: string, revision: number, configJson: string): void {
    this.configs.set(key(environmentId, revision), configJson);
  }

  get(environmentId: string, revision: number): string | undefined {
    return this.configs.get(key(environmentId, revision));
  }
}

const key = (environmentId: string, revision: number) => `${environmentId}\u0000${Number(revision)}`;
