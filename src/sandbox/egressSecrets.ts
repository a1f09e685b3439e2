/**
 * One sandbox's secret substitution table (vault `environment_variable` credentials): the
 * placeholder each variable is set to inside, the per-sandbox CA for TLS interception, and the
 * current run's binding (how a secret is opened through admission, where refusals are reported).
 *
 * Placeholders and the CA are fixed when the sandbox starts (they are in its environment and trust
 * bundle); the binding is replaced on every realize, so a secret is always opened under the claim
 * of the run whose command is making the request, never an earlier one's.
 */

import type { SandboxCa } from "./egressCa.js";
import type { SandboxCredentials, SandboxSecretVariable } from "./ports.js";
import { settable } from "./secretReach.js";
import { newPlaceholder, type Substitution, substitutionsFor } from "./secretSubstitution.js";

export class EgressSecrets {
  private binding: Pick<SandboxCredentials, "open" | "onHostRefused"> | null = null;

  private constructor(
    readonly table: readonly Substitution[],
    readonly ca: SandboxCa,
  ) {}

  /**
   * A table for `variables` (one placeholder each; a variable whose name is reserved for the
   * sandbox's own plumbing, or not a valid variable name, is left out), with a new CA.
   */
  static async create(variables: readonly SandboxSecretVariable[]): Promise<EgressSecrets> {
    const table: Substitution[] = [];
    for (const variable of variables) {
      if (!settable(variable.secretName)) continue;
      if (table.some((entry) => entry.secretName === variable.secretName)) continue;
      table.push({ ...variable, placeholder: newPlaceholder() });
    }
    // Loaded here, not at start-up: the X.509 library needs a global polyfill (egressCa.ts).
    const { SandboxCa } = await import("./egressCa.js");
    return new EgressSecrets(table, await SandboxCa.create());
  }

  /** The variables the sandbox's commands get: each secret's name set to its placeholder. */
  environment(): Record<string, string> {
    return Object.fromEntries(this.table.map((entry) => [entry.secretName, entry.placeholder]));
  }

  /** The current run's binding (replaced on every realize). */
  bind(credentials: SandboxCredentials): void {
    this.binding = { open: credentials.open, onHostRefused: credentials.onHostRefused };
  }

  /** The substitutions whose credential allows `host`. */
  forHost(host: string): Substitution[] {
    return substitutionsFor(this.table, host);
  }

  /** The secret for one substitution, or null (no binding yet, refused, or the claim was lost). */
  async open(secretName: string): Promise<Buffer | null> {
    const binding = this.binding;
    if (!binding) return null;
    return binding.open(secretName);
  }

  /** The environment's networking refused `host`: report it for every credential allowing it. */
  refused(host: string, reason: string): void {
    const binding = this.binding;
    if (!binding) return;
    for (const entry of this.table) {
      // Only credentials that name their hosts: an `unrestricted` one goes wherever the
      // environment lets it, so a refusal is the environment's, not a credential's host.
      if (entry.networking.type !== "limited") continue;
      if (!substitutionsFor([entry], host).length) continue;
      binding.onHostRefused(entry.secretName, host, reason);
    }
  }
}
