import { AwakenError } from "../../kernel/errors.js";
import type { ImageBuildStore } from "./ports.js";

/**
 * A session of a revision with a derived-image demand starts only once that image is `ready`:
 * while it is `pending` or `building` it is refused (409, retry later), and while `failed` it is
 * refused with the build's (secret-free) error. A revision without a demand runs its image as named.
 */
export async function admitBuiltImage(
  builds: Pick<ImageBuildStore, "forRevision">,
  environmentId: string,
  revision: number,
): Promise<void> {
  const build = await builds.forRevision(environmentId, revision);
  if (build === null || build.state === "ready") return;
  const where = `environment ${environmentId} (revision ${revision})`;
  const message =
    build.state === "failed"
      ? `${where}: its container image build ${build.id} failed (${build.error ?? "no error recorded"}); ` +
        "an admin retries it with POST /v1/awaken/environments/{id}/image/rebuild"
      : `${where}: its container image build ${build.id} is ${build.state}; retry once it is ready`;
  throw new AwakenError("image_build_not_ready", message, {
    retryable: build.state !== "failed",
    details: { error_code: "image_build_not_ready", image_build: { id: build.id, status: build.state } },
  });
}
