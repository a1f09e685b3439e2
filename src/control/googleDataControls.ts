import { invalid } from "../kernel/errors.js";

/**
 * A user profile's Google data controls (customer-managed keys and customer-owned buckets for a
 * hosted provider's regions). A self-hosted server reaches no such provider: the controls are
 * recorded as set and answered back, and no region ever applies them (each reads `suspended`).
 */
export interface BucketReference {
  projectNumber: string;
  bucketName: string;
}

export interface GoogleDataControls {
  cmek: { enabled: boolean; externalKeyIds: Record<string, string> };
  storage: { enabled: boolean; buckets: Record<string, BucketReference> };
  updatedAt: number;
}

/** What an update asks, already shape-checked at the edge: absent, the control is left as it is. */
export interface GoogleDataControlsPatch {
  cmek?: { type: "disabled" } | { type: "enabled"; external_key_ids?: Record<string, string | null> | null };
  storage?:
    | { type: "disabled" }
    | {
        type: "enabled";
        buckets?: Record<string, { project_number: string; bucket_name: string } | null>;
      };
}

/** Every profile has controls; one never set reads as both controls off. */
export function initialDataControls(createdAt: number): GoogleDataControls {
  return {
    cmek: { enabled: false, externalKeyIds: {} },
    storage: { enabled: false, buckets: {} },
    updatedAt: createdAt,
  };
}

/** Whether the update asks for anything: the SDK's own example sends `{}`, which changes nothing. */
export const changesDataControls = (patch: GoogleDataControlsPatch) =>
  patch.cmek !== undefined || patch.storage !== undefined;

/** The controls after `patch`, checked as the SDK states: a control on needs one region set. */
export function applyDataControlsPatch(
  current: GoogleDataControls,
  patch: GoogleDataControlsPatch,
  now: number,
): GoogleDataControls {
  if (!changesDataControls(patch)) return current;
  let cmek = current.cmek;
  if (patch.cmek?.type === "disabled") cmek = { enabled: false, externalKeyIds: {} };
  else if (patch.cmek?.type === "enabled") {
    const keys = { ...(current.cmek.enabled ? current.cmek.externalKeyIds : {}) };
    for (const [region, key] of Object.entries(patch.cmek.external_key_ids ?? {})) {
      if (key === null) delete keys[region];
      else keys[region] = key;
    }
    if (Object.keys(keys).length === 0)
      throw invalid("cmek.external_key_ids: while the control is on, at least one region must have a key");
    cmek = { enabled: true, externalKeyIds: keys };
  }
  let storage = current.storage;
  if (patch.storage?.type === "disabled") storage = { enabled: false, buckets: {} };
  else if (patch.storage?.type === "enabled") {
    const buckets = { ...(current.storage.enabled ? current.storage.buckets : {}) };
    for (const [region, bucket] of Object.entries(patch.storage.buckets ?? {})) {
      if (bucket === null) delete buckets[region];
      else buckets[region] = { projectNumber: bucket.project_number, bucketName: bucket.bucket_name };
    }
    if (Object.keys(buckets).length === 0)
      throw invalid("storage.buckets: while the control is on, at least one region must have a bucket");
    const seen = new Map<string, string>();
    for (const [region, bucket] of Object.entries(buckets)) {
      const other = seen.get(bucket.bucketName);
      if (other !== undefined)
        throw invalid(
          `storage.buckets: bucket ${JSON.stringify(bucket.bucketName)} is set for regions ${other} and ${region}; a bucket can serve only one region`,
        );
      seen.set(bucket.bucketName, region);
    }
    storage = { enabled: true, buckets };
  }
  return { cmek, storage, updatedAt: now };
}
