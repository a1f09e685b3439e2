/**
 * Container image references an environment may name for the `container` sandbox tier. A reference
 * is a client string that ends up on podman's command line: it is accepted only in a strict shape
 * (never starting with `-`, no whitespace or shell characters) and only when the operator listed it
 * exactly (`AWAKEN_ALLOWED_CONTAINER_IMAGES=REF,REF` on the server and on every worker).
 */

export const ALLOWED_CONTAINER_IMAGES_ENV = "AWAKEN_ALLOWED_CONTAINER_IMAGES";

/** Longest reference accepted (registry host, path, tag or digest). */
export const MAX_IMAGE_REFERENCE_CHARS = 255;

// name: lowercase path components separated by `/`, the first may be a host[:port];
// then `:tag` and/or `@sha256:<64 hex>`.
const COMPONENT = "[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*";
const HOST = "[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?";
const REFERENCE = new RegExp(
  `^(?:${HOST}/)?${COMPONENT}(?:/${COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`,
);

/** Why `reference` is not a well-formed image reference, or null when it is one. */
export function imageReferenceProblem(reference: string): string | null {
  if (reference.length === 0) return "the image reference is empty";
  if (reference.length > MAX_IMAGE_REFERENCE_CHARS)
    return `the image reference is longer than ${MAX_IMAGE_REFERENCE_CHARS} characters`;
  if (!REFERENCE.test(reference))
    return "the image reference must look like `host/name:tag` or `host/name@sha256:<64 hex>` (lowercase name, no leading `-`)";
  return null;
}

/** Pinned by content: `…@sha256:<64 hex>` (preferred: a tag can be moved, a digest cannot). */
export function isDigestReference(reference: string): boolean {
  return /@sha256:[a-f0-9]{64}$/.test(reference);
}

/**
 * The operator's allow-list from the environment variable (comma-separated). A malformed entry is
 * a start-up error: an operator must not believe an image is allowed.
 */
export function allowedContainerImages(env: NodeJS.ProcessEnv = process.env): string[] {
  const all = [
    ...new Set(
      (env[ALLOWED_CONTAINER_IMAGES_ENV] ?? "")
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    ),
  ];
  for (const entry of all) {
    const problem = imageReferenceProblem(entry);
    if (problem !== null) throw new Error(`allowed container image "${entry}": ${problem}`);
  }
  return all;
}

/** Why `reference` may not run here (malformed, or not on `allowed`), or null when it may. */
export function imageAdmissionProblem(
  reference: string | undefined,
  allowed: readonly string[],
): string | null {
  if (reference === undefined)
    return 'the "container" tier needs config.sandbox.image, an image reference the operator allowed';
  const problem = imageReferenceProblem(reference);
  if (problem !== null) return problem;
  if (!allowed.includes(reference))
    return (
      `the image "${reference}" is not on this server's allow-list; an operator allows one with ` +
      `${ALLOWED_CONTAINER_IMAGES_ENV}`
    );
  return null;
}

/**
 * Why the derived image `built` (a digest the coordinator's own build recorded for the revision)
 * may not run here, or null when it may: it must be well formed and pinned to a digest, and the
 * base it was built from must itself be admitted. The allow-list is not widened: the base was
 * allowed, a digest names immutable content, and the operator's build worker produced it.
 */
export function builtImageAdmissionProblem(
  built: string,
  base: string | undefined,
  allowed: readonly string[],
): string | null {
  const problem = imageReferenceProblem(built);
  if (problem !== null) return problem;
  if (!isDigestReference(built)) return `the built image "${built}" is not pinned to a sha256 digest`;
  return imageAdmissionProblem(base, allowed);
}
