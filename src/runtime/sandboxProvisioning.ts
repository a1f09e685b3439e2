/**
 * The session's sandbox as the run needs it: realized on the first Hand tool use, or up front when
 * the environment asks for `eager` provisioning. Kept apart from the tool step because eager
 * provisioning runs before the loop, and because the first realization is recorded once per session
 * (`SANDBOX_REALIZED`) whichever step or worker triggered it.
 */

import {
  type EnvironmentConfig,
  sandboxImageOf,
  sandboxProvisioningOf,
  sandboxTierOf,
} from "../coordinator/environmentConfig.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";
import type { PackageResolution } from "../kernel/packageResolution.js";
import type {
  FrozenResolutionSource,
  Sandbox,
  SandboxMounts,
  SandboxRepository,
  SandboxSpec,
} from "../sandbox/ports.js";
import { idle, sessionError } from "./modelFacts.js";
import type { PackageResolutionRequest } from "./ports.js";
import type { RunContext } from "./runContext.js";
import type { SecretEgress } from "./secretEgress.js";
import { SANDBOX_REALIZED, sandboxRealized } from "./toolFacts.js";

export class SandboxProvisioning {
  private sandboxRecorded = false;
  /** The revision's frozen package resolution once the preparer read or recorded it (one per run). */
  private resolution: PackageResolution | null = null;

  constructor(
    private readonly run: RunContext,
    /** The session's `environment_variable` credentials: the sandbox's proxy opens them through it. */
    private readonly secrets: SecretEgress,
    /** The run's mounts and repositories, once realized (resourceRealization.ts). */
    private readonly resources: () => { mounts?: SandboxMounts; repositories: SandboxRepository[] } = () => ({
      repositories: [],
    }),
  ) {}

  /**
   * The session's sandbox. The first realization the history has not recorded yet comes with an
   * internal fact carrying its latency, so sandbox start-up is measured apart from the tool's own
   * time and from session creation (one per session, whichever worker realized it).
   */
  async provision(): Promise<{ sandbox: Sandbox; fact: TypedFact | null }> {
    const spec = await this.secrets.withCredentials(this.sandboxSpec());
    const started = performance.now();
    let sandbox: Sandbox;
    try {
      sandbox = await this.run.ports.sandboxes.realize(spec);
    } catch (error) {
      if (!this.run.signal.aborted) this.run.metrics.sandboxRealized(spec.tier, "error");
      throw error;
    }
    if (
      this.run.facts.some((f) => f.kind === "internal" && f.type === SANDBOX_REALIZED) ||
      this.sandboxRecorded
    )
      return { sandbox, fact: null };
    this.sandboxRecorded = true;
    const ms = Math.round((performance.now() - started) * 100) / 100;
    this.run.metrics.sandboxRealized(spec.tier, "ok", ms / 1000);
    this.run.ports.log.info({ sessionId: spec.sessionId, tier: spec.tier, ms }, "sandbox realized");
    return {
      sandbox,
      fact: sandboxRealized(
        this.run.ports.clock.now(),
        spec.tier,
        sandboxProvisioningOf(this.run.environment()) ?? "on_tool_use",
        ms,
        this.resolution?.id,
        spec.builtFrom === undefined ? undefined : spec.image,
      ),
    };
  }

  /**
   * `eager` provisioning: the sandbox exists before the model or any tool runs (realizing is
   * idempotent, so a resumed run just finds it). A tier that cannot be realized ends the run with
   * a clear error instead of running without its sandbox. Mounted resources need the sandbox
   * before the model's first call whatever the provisioning says (`required`).
   */
  async provisionEagerly(required = false): Promise<"ok" | "lost" | "failed"> {
    const config = this.run.environment();
    if (config.type !== "cloud" || (sandboxProvisioningOf(config) !== "eager" && !required)) return "ok";
    try {
      const { fact } = await this.provision();
      if (!fact) return "ok";
      return (await this.run.commitLanding([fact])) === "ok" ? "ok" : "lost";
    } catch (error) {
      if (this.run.signal.aborted) return "lost";
      const message = error instanceof Error ? error.message : String(error);
      const now = this.run.ports.clock.now();
      const status = await this.run.commitLanding(
        [
          sessionError(
            now,
            "unknown_error",
            `the session's sandbox could not be started: ${message}`,
            "terminal",
          ),
          idle(now, { kind: "retries_exhausted" }),
        ],
        "failed",
      );
      return status === "ok" ? "failed" : "lost";
    }
  }

  /** The sandbox the pinned environment revision asks for (the catalog offers Hand tools only in cloud). */
  private sandboxSpec(): SandboxSpec {
    const config = this.run.activation.environment.config;
    if (config.type !== "cloud") throw new Error("Hand tools run only in cloud environments");
    const { mounts, repositories } = this.resources();
    const image = this.image(config);
    return {
      tier: sandboxTierOf(config) ?? "bwrap",
      ...image,
      sessionId: this.run.activation.sessionId,
      tenant: this.run.activation.workspaceId,
      ...(this.run.activation.workspaceErasedAt === undefined
        ? {}
        : { erasedAt: this.run.activation.workspaceErasedAt }),
      networking:
        config.networking.type === "limited"
          ? {
              type: "limited",
              allowed_hosts: [...config.networking.allowed_hosts],
              allow_package_managers: config.networking.allow_package_managers,
            }
          : { type: "unrestricted" },
      // Prepared on the worker's host before the sandbox starts (a marker check once prepared);
      // a derived image already holds the npm and pip packages, installed from the frozen resolution.
      packages: {
        apt: config.packages.apt,
        cargo: config.packages.cargo,
        gem: config.packages.gem,
        go: config.packages.go,
        npm: image.builtFrom === undefined ? config.packages.npm : [],
        pip: image.builtFrom === undefined ? config.packages.pip : [],
      },
      ...(image.builtFrom === undefined ? this.frozenResolution() : {}),
      ...(mounts === undefined ? {} : { mounts }),
      ...(repositories.length === 0 ? {} : { repositories }),
    };
  }

  /**
   * The image the container runs: the revision's derived image when the coordinator says its build
   * is ready (the base then goes along for admission), else the image the revision names.
   */
  private image(config: EnvironmentConfig): { image?: string; builtFrom?: string } {
    const base = sandboxImageOf(config);
    const built = this.run.activation.builtImage;
    if (built !== undefined && base !== undefined && sandboxTierOf(config) === "container")
      return { image: built, builtFrom: base };
    return base === undefined ? {} : { image: base };
  }

  /**
   * The revision's frozen package resolution as the preparer reaches it: through the runtime's
   * port, under the run's claim, remembered for the run once known (the fact names it).
   */
  private frozenResolution(): { packageResolution?: FrozenResolutionSource } {
    const port = this.run.ports.packageResolutions;
    if (!port) return {};
    const { activation } = this.run;
    const request: PackageResolutionRequest = {
      workspaceId: activation.workspaceId,
      sessionId: activation.sessionId,
      runId: activation.runId,
      owner: activation.owner,
      epoch: activation.epoch,
      environmentId: activation.environment.id,
      revision: activation.environment.revision,
    };
    return {
      packageResolution: {
        recorded: async () => {
          this.resolution ??= await port.recorded(request);
          return this.resolution;
        },
        record: async (resolution) => {
          this.resolution = await port.record(request, resolution);
          return this.resolution;
        },
      },
    };
  }
}
