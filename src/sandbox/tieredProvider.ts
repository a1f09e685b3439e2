import { isWeakerThanDefault, weakerTierRefusal } from "../kernel/sandboxTiers.js";
import { hasPackages, PackagePreparationError, type PackagePreparer } from "./packagePreparer.js";
import {
  type Sandbox,
  type SandboxProvider,
  type SandboxSpec,
  type SandboxTier,
  SandboxUnavailableError,
} from "./ports.js";
import type { TenantWorkspaces } from "./workspaces.js";

/** What to tell an operator whose host lacks a tier. */
const HOW_TO_GET: Record<SandboxTier, string> = {
  bwrap: "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) on every worker host",
  none: "the operator did not enable the unsandboxed tier on this worker",
};

/**
 * Routes each session to the provider of the tier its frozen environment revision names. A tier
 * this host cannot realize is refused, never replaced by a weaker one.
 */
export class TieredSandboxProvider implements SandboxProvider {
  constructor(
    private readonly tiers: Partial<Record<SandboxTier, SandboxProvider>>,
    /**
     * Prepares a revision's packages on this host (packagePreparer.ts). Absent: a spec with
     * packages is refused, never realized without them.
     */
    readonly packages?: PackagePreparer,
    /** Bounds each tenant's session workspaces on this host (workspaces.ts). Absent: unbounded. */
    private readonly tenants?: TenantWorkspaces,
  ) {}

  async realize(spec: SandboxSpec): Promise<Sandbox> {
    const packages = hasPackages(spec.packages) ? spec.packages : undefined;
    const preparer = this.packages;
    if (packages && !preparer)
      throw new PackagePreparationError("packages", "this worker cannot prepare environment packages");
    const provider = this.providerOf(spec.tier);
    // Admitted before its packages are prepared: a session past the bound costs no install.
    const realize = async (): Promise<Sandbox> => {
      if (!packages || !preparer) return provider.realize(spec);
      // Already prepared (session creation, or an earlier session of the same content): a marker
      // check. Otherwise this worker's host prepares it now, once; a failure fails the realization.
      const preparedPackages = await preparer.prepare(packages);
      return provider.realize({ ...spec, preparedPackages });
    };
    if (!this.tenants) return realize();
    return this.tenants.admit(spec, (sessionId) => this.destroy(sessionId), realize);
  }

  /** The provider of `tier`; refused when this host has none, never replaced by a weaker one. */
  private providerOf(tier: SandboxTier): SandboxProvider {
    const provider = this.tiers[tier];
    if (provider) return provider;
    if (isWeakerThanDefault(tier))
      throw new SandboxUnavailableError(tier, weakerTierRefusal(tier, "this worker"));
    throw new SandboxUnavailableError(
      tier,
      `the "${tier}" sandbox tier is not available on this worker: ${HOW_TO_GET[tier]}`,
    );
  }

  async destroy(sessionId: string): Promise<void> {
    for (const provider of Object.values(this.tiers)) await provider.destroy(sessionId);
  }

  async close(): Promise<void> {
    for (const provider of Object.values(this.tiers)) await provider.close();
  }
}
