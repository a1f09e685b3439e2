/**
 * Which of a sandbox's `environment_variable` credentials it can never use, decided at realization
 * from the frozen configuration alone: every one on a tier without an egress proxy (`none`: the
 * variable is not set at all, since only the secret itself could be), and, under `limited`
 * networking, one whose own hosts the environment does not allow. The tiers report these through
 * `SandboxCredentials.onUnusable`; the run turns them into `credential_host_unreachable_error`.
 * The proxy still refuses per request whatever this says (egressProxy.ts).
 */

import { hostAllowed, normalizeHost } from "./egressHosts.js";
import { allowedHostsOf } from "./egressProxy.js";
import type { SandboxSecretVariable, SandboxSpec } from "./ports.js";
import { RESERVED_VARIABLES } from "./secretSubstitution.js";

/** Whether the sandbox sets a variable of this name (egressSecrets.ts leaves the others out). */
export function settable(secretName: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(secretName) && !RESERVED_VARIABLES.has(secretName);
}

export interface UnusableSecret {
  secretName: string;
  reason: string;
}

/** Whether some host could match both `pattern` (a credential's) and one of `allowed` (the environment's). */
export function hostsOverlap(pattern: string, allowed: readonly string[]): boolean {
  const p = normalizeHost(pattern);
  if (!p.startsWith("*.")) return hostAllowed(p, allowed);
  const domain = p.slice(2);
  return allowed.some((entry) => {
    const e = normalizeHost(entry);
    if (!e.startsWith("*.")) return hostAllowed(e, [p]);
    const other = e.slice(2);
    return other === domain || other.endsWith(`.${domain}`) || domain.endsWith(`.${other}`);
  });
}

export function unusableSecrets(
  variables: readonly SandboxSecretVariable[],
  spec: Pick<SandboxSpec, "tier" | "networking">,
): UnusableSecret[] {
  const out: UnusableSecret[] = [];
  for (const { secretName, networking } of variables) {
    if (spec.tier === "none") {
      out.push({
        secretName,
        reason: `the "none" sandbox tier has no egress proxy, so the ${secretName} credential cannot be injected into requests; ${secretName} is not set in the sandbox (use the bwrap tier)`,
      });
      continue;
    }
    if (!settable(secretName)) {
      out.push({
        secretName,
        reason: `${secretName} is not a variable name the sandbox can set (reserved for its own plumbing, or not a valid name); it is not set`,
      });
      continue;
    }
    if (spec.networking.type !== "limited") continue;
    const allowed = allowedHostsOf(spec.networking);
    if (networking.type === "unrestricted") {
      if (allowed.length === 0)
        out.push({
          secretName,
          reason: `the environment's networking allows no host, so the ${secretName} credential cannot be used`,
        });
      continue;
    }
    const forbidden = networking.allowed_hosts.filter((host) => !hostsOverlap(host, allowed));
    if (forbidden.length > 0) {
      out.push({
        secretName,
        reason: `the environment's networking (limited) forbids ${forbidden.join(", ")}, which the ${secretName} credential is for; its secret is never sent there`,
      });
    }
  }
  return out;
}
