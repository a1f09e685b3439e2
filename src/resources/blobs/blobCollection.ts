import type { BlobDigest, BlobReferences, BlobStore } from "../ports.js";

/**
 * Deletes a blob only when no family's rows still name it. Blobs are shared by content: the same
 * bytes uploaded as a file and as a skill's file are one blob, so each family that keeps blobs is
 * asked (files, skills, …) before the bytes go.
 */
export async function deleteBlobIfUnreferenced(
  blobs: BlobStore,
  owners: readonly BlobReferences[],
  digest: BlobDigest,
): Promise<boolean> {
  for (const owner of owners) {
    if (await owner.references(digest)) return false;
  }
  await blobs.delete(digest);
  return true;
}

/** The stores among `stores` that keep blobs (they answer `references`). */
export function blobOwners(stores: Readonly<Record<string, unknown>>): BlobReferences[] {
  return Object.values(stores).filter(isBlobReferences);
}

function isBlobReferences(value: unknown): value is BlobReferences {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { references?: unknown }).references === "function"
  );
}
