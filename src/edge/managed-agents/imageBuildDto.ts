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
