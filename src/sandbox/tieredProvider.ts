import { isWeakerThanDefault, weakerTierRefusal } from "../kernel/sandboxTiers.js";
import { RepositoryCloneError, type RepositoryCloner } from "./gitClone.js";
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
  container: "install podman and runc (Debian/Ubuntu: `apt-get install podman runc`) on every worker host",
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
    /**
     * Clones sessions' repositories into their workspaces under `workspaceRoot` (gitClone.ts).
     * Absent: a spec with repositories is refused.
     */
    private readonly repositories?: { cloner: RepositoryCloner; workspaceRoot: string },
  ) {}

  async realize(spec: SandboxSpec): Promise<Sandbox> {
    const packages = hasPackages(spec.packages) ? spec.packages : undefined;
    const preparer = this.packages;
    if (packages && !preparer)
      throw new PackagePreparationError("packages", "this worker cannot prepare environment packages");
    const provider = this.providerOf(spec.tier);
    // Admitted before its packages are prepared: a session past the bound costs no install.
    const realize = async (): Promise<Sandbox> => {
      if (!packages || !preparer) return this.withRepositories(spec, await provider.realize(spec));
      // Already prepared (session creation, or an earlier session of the same content): a marker
      // check. Otherwise this worker's host prepares it now, once; a failure fails the realization.
      const preparedPackages = await preparer.prepare(packages, spec.packageResolution);
      return this.withRepositories(spec, await provider.realize({ ...spec, preparedPackages }));
    };
    if (!this.tenants) return realize();
    return this.tenants.admit(spec, (sessionId) => this.destroy(sessionId), realize);
  }

  /**
   * Clones the spec's repositories into the realized sandbox's workspace (owned by then by the
   * sandbox's uid, which the clone is given to). One already there is left as it is; a clone that
   * fails fails the realization, naming the repository and why (never its token).
   */
  private async withRepositories(spec: SandboxSpec, sandbox: Sandbox): Promise<Sandbox> {
    const repositories = spec.repositories ?? [];
    if (repositories.length === 0) return sandbox;
    if (!this.repositories)
      throw new SandboxUnavailableError(spec.tier, "this worker cannot clone session repositories");
    const { cloner, workspaceRoot } = this.repositories;
    for (const repository of repositories) {
      try {
        await cloner.cloneForSession(workspaceRoot, spec.sessionId, repository);
      } catch (error) {
        if (!(error instanceof RepositoryCloneError)) throw error;
        throw new SandboxUnavailableError(
          spec.tier,
          `repository ${repository.url} (${repository.id}) could not be cloned: ${error.message}`,
        );
      }
    }
    return sandbox;
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
