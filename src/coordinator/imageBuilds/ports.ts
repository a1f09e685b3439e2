import type { BuildLease, BuildOutcome, ImageBuildKey, ImageBuildRecord } from "../../kernel/imageBuild.js";
import type { PackageResolution } from "../../kernel/packageResolution.js";
import type { ListQuery, Page } from "../../kernel/pagination.js";

/** A lease-guarded change that the fence refused: the caller no longer holds the build. */
export interface BuildFenceRefusal {
  refused: string;
}

/** An environment of the reading workspace whose revisions run a build. */
export interface ImageBuildUser {
  environmentId: string;
  name: string;
  /** Its revisions linked to the build, ascending. */
  revisions: number[];
  /** Whether its latest revision is one of them (the build is what it runs now). */
  current: boolean;
}

/** A build as one workspace sees it: the shared record and only that workspace's environments. */
export interface WorkspaceImageBuild {
  build: ImageBuildRecord;
  environments: ImageBuildUser[];
}

/**
 * The durable image-build demands (migration 036). Every change that a build worker makes names its
 * lease and is refused when the lease is no longer current (`buildLeaseProblem`), so a worker that
 * lost its claim can never settle, renew or release someone else's build.
 */
export interface ImageBuildStore {
  /**
   * Records the demand for `key` if absent (identical inputs converge on one build) and links the
   * revision to it (first writer wins). Answers the build the revision runs.
   */
  demand(key: ImageBuildKey, environmentId: string, revision: number, now: number): Promise<ImageBuildRecord>;
  get(id: string): Promise<ImageBuildRecord | null>;
  /** The build the revision runs; null when it has no demand (yet). */
  forRevision(environmentId: string, revision: number): Promise<ImageBuildRecord | null>;
  /**
   * Claims the oldest claimable build (pending, or building under a lapsed lease) for `owner`:
   * state `building`, epoch advanced, lease until `now + leaseMs`. Null when none waits.
   */
  claim(owner: string, leaseMs: number, now: number): Promise<ImageBuildRecord | null>;
  renew(lease: BuildLease, leaseMs: number, now: number): Promise<ImageBuildRecord | BuildFenceRefusal>;
  settle(
    lease: BuildLease,
    outcome: BuildOutcome,
    now: number,
  ): Promise<ImageBuildRecord | BuildFenceRefusal>;
  /** Hands a claimed build back to `pending` (a worker stopping); the epoch stays, so its lease is dead. */
  release(lease: BuildLease, now: number): Promise<ImageBuildRecord | BuildFenceRefusal>;
  /** A recorded frozen resolution by its id (any revision that recorded it: equal ids, equal content). */
  resolution(resolutionId: string): Promise<PackageResolution | null>;
  /**
   * The builds that `workspaceId`'s environments reference, newest first. A build shared by
   * identical inputs across workspaces is listed with the reader's environments only.
   */
  listForWorkspace(workspaceId: string, q: ListQuery): Promise<Page<WorkspaceImageBuild>>;
  /** A failed build back to `pending`, by an explicit call only; null when it was not failed. */
  rebuild(id: string, now: number): Promise<ImageBuildRecord | null>;
}
