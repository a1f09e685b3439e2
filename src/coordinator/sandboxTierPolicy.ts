import { imageAdmissionProblem } from "../kernel/containerImages.js";
import { AwakenError } from "../kernel/errors.js";
import { isWeakerThanDefault, weakerTierRefusal } from "../kernel/sandboxTiers.js";
import { type EnvironmentConfig, sandboxImageOf, sandboxTierOf } from "./environmentConfig.js";

/** The operator's choice about tiers weaker than the default (kernel/sandboxTiers.ts). */
export interface SandboxTierPolicy {
  allowWeakerTiers: boolean;
  /** Image references the `container` tier may run (kernel/containerImages.ts); absent: none. */
  allowedContainerImages?: readonly string[];
}

/** Off unless the operator said otherwise. */
export const STRICT_TIER_POLICY: SandboxTierPolicy = { allowWeakerTiers: false };

/**
 * Refuses (400) a cloud config whose tier is weaker than the default while the operator has not
 * enabled weaker tiers, and a `container` tier whose image is not on the operator's allow-list. `where` names what was refused (`config.sandbox.tier`, a session).
 */
export function admitSandboxTier(config: EnvironmentConfig, policy: SandboxTierPolicy, where: string): void {
  const tier = sandboxTierOf(config);
  if (tier === "container") {
    const problem = imageAdmissionProblem(sandboxImageOf(config), policy.allowedContainerImages ?? []);
    if (problem !== null) throw new AwakenError("invalid_request", `${where}: ${problem}`);
    return;
  }
  if (tier === null || policy.allowWeakerTiers || !isWeakerThanDefault(tier)) return;
  throw new AwakenError("invalid_request", weakerTierRefusal(tier, where));
}
