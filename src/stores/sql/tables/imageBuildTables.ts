/** Container image builds' tables (coordinator/imageBuilds), part of `Database` (schema.ts). Migration 036. */
export interface ImageBuildTables {
  image_builds: {
    /** `imgbuild_…`: a digest of (base_image, resolution_id, recipe_digest). */
    id: string;
    base_image: string;
    resolution_id: string;
    recipe_digest: string;
    state: string;
    owner: string | null;
    epoch: number;
    lease_expires_at: number | null;
    attempts: number;
    digest: string | null;
    image_reference: string | null;
    error: string | null;
    log_tail: string | null;
    created_at: number;
    updated_at: number;
  };
  /** Which build an environment revision runs (first writer wins). */
  environment_image_builds: {
    environment_id: string;
    revision: number;
    build_id: string;
    created_at: number;
  };
}
