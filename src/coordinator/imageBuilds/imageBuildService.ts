import type { Clock } from "../../kernel/clock.js";
import { imageReferenceProblem } from "../../kernel/containerImages.js";
import { AwakenError } from "../../kernel/errors.js";
import {
  type BuildLease,
  type BuildOutcome,
  type ImageBuildRecord,
  imageBuildKey,
  isImageBuildId,
  isManifestDigest,
  MAX_BUILD_ERROR,
  MAX_BUILD_LOG_TAIL,
  resolutionBuildsImage,
} from "../../kernel/imageBuild.js";
import type { PackageResolution } from "../../kernel/packageResolution.js";
import type { ListQuery, Page } from "../../kernel/pagination.js";
import { type EnvironmentConfig, sandboxImageOf, sandboxTierOf } from "../environmentConfig.js";
import type { ImageBuildStore, WorkspaceImageBuild } from "./ports.js";

/** How long a claim holds before it lapses unless renewed (a build worker renews well before). */
export const DEFAULT_BUILD_LEASE_MS = 60_000;
/**
 * The bounds an operator may set it within: below 2 s a renewal (every third of it, over HTTP) has
 * no room to arrive; above an hour a killed worker's build waits longer than any build may take.
 */
export const MIN_BUILD_LEASE_MS = 2_000;
export const MAX_BUILD_LEASE_MS = 3_600_000;

/**
 * The Coordinator's side of image builds: it owns the durable demand, its state, its lease and the
 * immutable digest; build workers only build. The Coordinator never builds and never holds registry
 * credentials: a build worker reports a digest it read back from the registry after its push.
 */
export class ImageBuildService {
  constructor(
    private readonly store: ImageBuildStore,
    private readonly clock: Clock,
    readonly leaseMs = DEFAULT_BUILD_LEASE_MS,
  ) {
    if (!Number.isInteger(leaseMs) || leaseMs < MIN_BUILD_LEASE_MS || leaseMs > MAX_BUILD_LEASE_MS)
      throw new RangeError(
        `the image build lease must be an integer from ${MIN_BUILD_LEASE_MS} to ${MAX_BUILD_LEASE_MS} ms`,
      );
  }

  /**
   * The build a container-tier revision runs once its package resolution is frozen: the revision's
   * base image plus that resolution. Null for revisions that run their image as named (another tier,
   * no image, or nothing to install).
   */
  async demandFor(
    environmentId: string,
    revision: number,
    config: EnvironmentConfig,
    resolution: PackageResolution,
  ): Promise<ImageBuildRecord | null> {
    const base = derivedImageBase(config);
    if (base === null || !resolutionBuildsImage(resolution)) return null;
    return this.store.demand(imageBuildKey(base, resolution.id), environmentId, revision, this.clock.now());
  }

  resolution(resolutionId: string): Promise<PackageResolution | null> {
    return this.store.resolution(resolutionId);
  }

  forRevision(environmentId: string, revision: number): Promise<ImageBuildRecord | null> {
    return this.store.forRevision(environmentId, revision);
  }

  /** The builds `workspaceId`'s environments run or ran, each with those environments only. */
  listForWorkspace(workspaceId: string, q: ListQuery): Promise<Page<WorkspaceImageBuild>> {
    return this.store.listForWorkspace(workspaceId, q);
  }

  claim(owner: string): Promise<ImageBuildRecord | null> {
    return this.store.claim(owner, this.leaseMs, this.clock.now());
  }

  async renew(lease: BuildLease): Promise<ImageBuildRecord> {
    return fenced(await this.store.renew(checkedLease(lease), this.leaseMs, this.clock.now()));
  }

  async release(lease: BuildLease): Promise<ImageBuildRecord> {
    return fenced(await this.store.release(checkedLease(lease), this.clock.now()));
  }

  /**
   * Settles a claim. `ready` must name a digest-pinned reference whose digest is the one reported:
   * the worker reads it back from the registry after the push, so a half-pushed image never lands.
   */
  async settle(lease: BuildLease, outcome: BuildOutcome): Promise<ImageBuildRecord> {
    const checked = checkedOutcome(outcome);
    return fenced(await this.store.settle(checkedLease(lease), checked, this.clock.now()));
  }

  /** Puts a failed build back in line; only this explicit call retries a failure. */
  async rebuild(environmentId: string, revision: number): Promise<ImageBuildRecord> {
    const build = await this.store.forRevision(environmentId, revision);
    if (build === null)
      throw new AwakenError(
        "not_found",
        `environment ${environmentId} revision ${revision} has no image build`,
      );
    if (build.state !== "failed")
      throw new AwakenError(
        "image_build_not_failed",
        `the image build is ${build.state}; only a failed build is rebuilt`,
      );
    return (await this.store.rebuild(build.id, this.clock.now())) ?? build;
  }
}

/** The base image a revision's derived image starts from, or null when it runs its image as named. */
export function derivedImageBase(config: EnvironmentConfig): string | null {
  if (config.type !== "cloud" || sandboxTierOf(config) !== "container") return null;
  const image = sandboxImageOf(config);
  if (image === undefined) return null;
  const listed = (config.packages.npm?.length ?? 0) + (config.packages.pip?.length ?? 0);
  return listed > 0 ? image : null;
}

function checkedLease(lease: BuildLease): BuildLease {
  if (!isImageBuildId(lease.buildId)) throw new AwakenError("invalid_request", "the build id is malformed");
  if (!Number.isSafeInteger(lease.epoch) || lease.epoch < 1)
    throw new AwakenError("invalid_request", "the lease epoch must be a positive integer");
  if (typeof lease.owner !== "string" || lease.owner.length === 0 || lease.owner.length > 200)
    throw new AwakenError("invalid_request", "the lease owner is malformed");
  return lease;
}

function checkedOutcome(outcome: BuildOutcome): BuildOutcome {
  if (outcome.kind === "ready") {
    if (!isManifestDigest(outcome.digest))
      throw new AwakenError("invalid_request", "a ready build needs a manifest digest sha256:<64 hex>");
    const problem = imageReferenceProblem(outcome.imageReference);
    if (problem !== null || !outcome.imageReference.endsWith(`@${outcome.digest}`))
      throw new AwakenError(
        "invalid_request",
        "a ready build needs a reference pinned to its digest (name@sha256:…)",
      );
    return { ...outcome, logTail: outcome.logTail.slice(-MAX_BUILD_LOG_TAIL) };
  }
  return {
    kind: "failed",
    error: outcome.error.slice(0, MAX_BUILD_ERROR),
    logTail: outcome.logTail.slice(-MAX_BUILD_LOG_TAIL),
  };
}

function fenced<T>(result: T | { refused: string }): T {
  if (typeof result === "object" && result !== null && "refused" in result)
    throw new AwakenError("image_build_lease_lost", `stale image build lease: ${result.refused}`);
  return result as T;
}
