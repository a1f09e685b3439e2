import type { WorkspaceImageBuild } from "../../coordinator/imageBuilds/ports.js";
import { isoTime } from "../../kernel/clock.js";
import type { ImageBuildRecord } from "../../kernel/imageBuild.js";

/**
 * `awaken_image`, an Awaken extension field of the Managed environment object: the derived container
 * image of the environment's current revision. `image` is the digest-pinned reference once ready;
 * never a registry credential (the build worker keeps those).
 */
export function imageBuildDto(build: ImageBuildRecord): Record<string, unknown> {
  return {
    id: build.id,
    status: build.state,
    base_image: build.baseImage,
    resolution_id: build.resolutionId,
    digest: build.digest,
    image: build.imageReference,
    error: build.error,
    log_tail: build.logTail,
    attempts: build.attempts,
  };
}

/**
 * One entry of `GET /v1/awaken/image_builds`: the shared build record (secret-free, as stored) and
 * the environments of the reading workspace that run it; never another workspace's environments.
 */
export function workspaceImageBuildDto(item: WorkspaceImageBuild): Record<string, unknown> {
  const { build } = item;
  return {
    type: "image_build",
    ...imageBuildDto(build),
    recipe_digest: build.recipeDigest,
    epoch: build.epoch,
    created_at: isoTime(build.createdAt),
    updated_at: isoTime(build.updatedAt),
    environments: item.environments.map((user) => ({
      id: user.environmentId,
      name: user.name,
      revisions: user.revisions,
      current: user.current,
    })),
  };
}
