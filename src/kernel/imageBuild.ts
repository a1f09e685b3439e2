/**
 * Container images derived from a frozen environment: an allowed base image plus a revision's frozen
 * package resolution, built by the recipe below. The three together are the build's identity, so
 * identical inputs anywhere converge on one build demand and one registry digest.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonicalJson.js";
import type { PackageResolution } from "./packageResolution.js";

/**
 * The recipe's version: what a build worker does with (base, resolution). A change to how images
 * are built gets a new version, so old digests are never mistaken for the new recipe's output.
 */
export const IMAGE_BUILD_RECIPE = {
  format: 1,
  steps: ["npm ci --ignore-scripts from the frozen lockfile", "pip install --require-hashes"],
} as const;

export type ImageBuildState = "pending" | "building" | "ready" | "failed";

/** The managers the recipe installs into a derived image; a revision's other lists are not carried. */
export const IMAGE_CARRIED_MANAGERS = ["npm", "pip"] as const;

/** Whether a frozen resolution has anything the recipe builds (an npm lockfile or frozen pip lines). */
export function resolutionBuildsImage(resolution: Pick<PackageResolution, "npm" | "pip"> | null): boolean {
  return resolution !== null && (resolution.npm !== null || resolution.pip !== null);
}

/** What a build is keyed by: equal keys are one demand. */
export interface ImageBuildKey {
  /** The base image reference the revision named (on the operator's allow-list). */
  baseImage: string;
  /** The revision's frozen package resolution (`pkgres_…`). */
  resolutionId: string;
  /** `sha256:<hex>` of the recipe the build follows. */
  recipeDigest: string;
}

export interface ImageBuildRecord extends ImageBuildKey {
  /** `imgbuild_` and 32 hex digits of the key's digest. */
  id: string;
  state: ImageBuildState;
  /** The build worker holding the lease while `building`. */
  owner: string | null;
  /** Advances with every claim; a settle or renewal from an older epoch is refused. */
  epoch: number;
  leaseExpiresAt: number | null;
  /** How many times a worker claimed it. */
  attempts: number;
  /** The immutable manifest digest (`sha256:<64 hex>`) once `ready`. */
  digest: string | null;
  /** Where the image was pushed, digest-pinned (`host/name@sha256:…`) once `ready`. */
  imageReference: string | null;
  /** Why it failed (secret-free), once `failed`. */
  error: string | null;
  /** The last lines of the build log (secret-free), once settled. */
  logTail: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Longest build-log tail kept (characters); the worker sends no more than this. */
export const MAX_BUILD_LOG_TAIL = 4_000;
export const MAX_BUILD_ERROR = 1_000;

const DIGEST = /^sha256:[a-f0-9]{64}$/;
const BUILD_ID = /^imgbuild_[a-f0-9]{32}$/;

export function recipeDigest(recipe: unknown = IMAGE_BUILD_RECIPE): string {
  return `sha256:${createHash("sha256").update(canonicalJson(recipe)).digest("hex")}`;
}

/** The build key of `baseImage` built with the frozen `resolutionId` by the current recipe. */
export function imageBuildKey(baseImage: string, resolutionId: string): ImageBuildKey {
  return { baseImage, resolutionId, recipeDigest: recipeDigest() };
}

export function imageBuildId(key: ImageBuildKey): string {
  const digest = createHash("sha256")
    .update(canonicalJson({ base: key.baseImage, resolution: key.resolutionId, recipe: key.recipeDigest }))
    .digest("hex");
  return `imgbuild_${digest.slice(0, 32)}`;
}

export function isImageBuildId(value: unknown): value is string {
  return typeof value === "string" && BUILD_ID.test(value);
}

export function isManifestDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST.test(value);
}

/** The lease a claim names: a settle, renewal or release must hold the current one. */
export interface BuildLease {
  buildId: string;
  owner: string;
  epoch: number;
}

/**
 * Why `lease` does not hold `build` at `now`, or null when it does. The same fence as runs
 * (`commitFence.ts`): the state must be `building`, owner and epoch current, the lease unexpired.
 */
export function buildLeaseProblem(
  build: ImageBuildRecord | null,
  lease: BuildLease,
  now: number,
): string | null {
  if (build === null) return `image build ${lease.buildId} not found`;
  if (build.state !== "building") return `image build ${build.id} is ${build.state}, not building`;
  if (build.epoch !== lease.epoch || build.owner !== lease.owner)
    return `image build ${build.id}: claim epoch ${build.epoch} is current, the caller holds ${lease.epoch}`;
  if (build.leaseExpiresAt === null || build.leaseExpiresAt <= now)
    return `image build ${build.id}: the lease expired`;
  return null;
}

/** Whether a worker may claim `build` at `now`: waiting, or building under a lapsed lease. */
export function buildClaimable(build: ImageBuildRecord, now: number): boolean {
  if (build.state === "pending") return true;
  return build.state === "building" && (build.leaseExpiresAt === null || build.leaseExpiresAt <= now);
}

/** How a build worker settles its claim. */
export type BuildOutcome =
  | { kind: "ready"; digest: string; imageReference: string; logTail: string }
  | { kind: "failed"; error: string; logTail: string };

/** Keeps the last `max` characters of a log, cut at a line start where possible. */
export function logTail(text: string, max = MAX_BUILD_LOG_TAIL): string {
  if (text.length <= max) return text;
  const cut = text.slice(text.length - max);
  const newline = cut.indexOf("\n");
  return newline >= 0 && newline < cut.length - 1 ? cut.slice(newline + 1) : cut;
}
