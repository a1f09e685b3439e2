import type { Clock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import { type PackageResolution, packageResolutionProblem } from "../kernel/packageResolution.js";
import type { ImageBuildService } from "./imageBuilds/imageBuildService.js";
import type { EnvironmentStore } from "./ports.js";

/** A revision, as a worker names it (the rest of its request is the claim, checked by the edge). */
export interface RevisionRef {
  environmentId: string;
  revision: number;
}

/**
 * The Coordinator's side of frozen package resolutions. The Coordinator has no installer, so it
 * never resolves: it keeps the first resolution a worker records for a revision and answers it to
 * every later asker. A resolution is checked (its lockfile is registry data only; its id is its
 * content's digest) before it is kept, so a worker cannot record something another would refuse.
 */
export class PackageResolutionRecords {
  constructor(
    private readonly store: EnvironmentStore,
    private readonly clock: Clock,
    /** Image builds: a container-tier revision with packages gets its build demand once frozen. */
    private readonly imageBuilds?: ImageBuildService,
  ) {}

  async recorded(ref: RevisionRef): Promise<PackageResolution | null> {
    const resolution = await this.store.packageResolution(ref.environmentId, ref.revision);
    if (resolution !== null) await this.demandImage(ref, resolution);
    return resolution;
  }

  async record(ref: RevisionRef, resolution: PackageResolution): Promise<PackageResolution> {
    const problem = packageResolutionProblem(resolution);
    if (problem !== null)
      throw new AwakenError("invalid_request", `the package resolution was not recorded: ${problem}`);
    if ((await this.store.getRevision(ref.environmentId, ref.revision)) === null)
      throw new AwakenError(
        "not_found",
        `environment ${ref.environmentId} has no revision ${ref.revision} to record a resolution for`,
      );
    const recorded = await this.store.recordPackageResolution(
      ref.environmentId,
      ref.revision,
      resolution,
      this.clock.now(),
    );
    await this.demandImage(ref, recorded);
    return recorded;
  }

  /** Records the revision's image-build demand (idempotent) when its image is derived. */
  private async demandImage(ref: RevisionRef, resolution: PackageResolution): Promise<void> {
    if (!this.imageBuilds) return;
    const config = await this.store.getRevision(ref.environmentId, ref.revision);
    if (config !== null)
      await this.imageBuilds.demandFor(ref.environmentId, ref.revision, config, resolution);
  }
}
