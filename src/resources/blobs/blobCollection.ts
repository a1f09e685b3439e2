import type { BlobDigest, BlobReferences, BlobStore } from "../ports.js";
import type { ResourceStores } from "../services.js";

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

/** The families that keep blobs: each is asked before bytes they may share are deleted. */
export function blobOwners(stores: ResourceStores): BlobReferences[] {
  return [stores.files, stores.skills];
}
