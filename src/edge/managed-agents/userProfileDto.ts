import type { GoogleDataControls } from "../../control/googleDataControls.js";
import type { ExternalUserDetails, UserProfileRecord } from "../../control/userProfiles.js";
import { isoTime } from "../../kernel/clock.js";
import { isLegacyWire, type UserProfileWire } from "./userProfileWire.js";

const isoOrNull = (ms: number | null) => (ms === null ? null : isoTime(ms));

function detailsDto(d: ExternalUserDetails) {
  return {
    account_status: d.accountStatus,
    country: d.country,
    email_hash: d.emailHash,
    entity_type: d.entityType,
    name_hash: d.nameHash,
    onboarded_at: isoOrNull(d.onboardedAt),
    reference_id: d.referenceId,
  };
}

/**
 * A user profile on the wire its request speaks (`userProfileWire.ts`). What a hosted provider
 * decides has no counterpart here and reads as nothing decided: no enforcement action open
 * (`unrestricted`), no program (`null`), no trust grant (`{}`).
 */
export function userProfileDto(p: UserProfileRecord, wire: UserProfileWire) {
  const base = {
    id: p.id,
    type: "user_profile" as const,
    created_at: isoTime(p.createdAt),
    updated_at: isoTime(p.updatedAt),
    metadata: p.metadata,
    name: p.name,
  };
  if (wire === "ga")
    return {
      ...base,
      access_type: p.accessType,
      external_user_details: detailsDto(p.details),
      enforcement_actions: [],
      enforcement_status: "unrestricted" as const,
      programs: { cyber: null, efs: null },
    };
  if (!isLegacyWire(wire))
    return {
      ...base,
      access_type: p.accessType,
      external_user_details: detailsDto(p.details),
      trust_grants: {},
    };
  return {
    ...base,
    ...(wire === "2026-08-18"
      ? { access_type: p.accessType, external_user_onboarded_at: isoOrNull(p.details.onboardedAt) }
      : {}),
    external_id: p.details.referenceId,
    trust_grants: {},
  };
}

export const deletedUserProfileDto = (id: string) => ({ id, type: "user_profile_deleted" as const });

/**
 * The recorded controls. No region ever applies them here, so every configured region reads
 * `suspended` (the control is not applied) with nothing in effect; nothing is ever retired.
 */
export function dataControlsDto(p: UserProfileRecord, c: GoogleDataControls) {
  const cmek = c.cmek.enabled
    ? {
        type: "enabled" as const,
        external_key_ids: c.cmek.externalKeyIds,
        status: Object.fromEntries(
          Object.keys(c.cmek.externalKeyIds).map((r) => [
            r,
            { type: "suspended" as const, effective_external_key_id: null },
          ]),
        ),
        retired_keys: [],
      }
    : { type: "disabled" as const, retired_keys: [] };
  const storage = c.storage.enabled
    ? {
        type: "enabled" as const,
        buckets: Object.fromEntries(
          Object.entries(c.storage.buckets).map(([r, b]) => [
            r,
            {
              bucket_name: b.bucketName,
              project_number: b.projectNumber,
              kms_key_name: null,
              location: null,
              project_id: null,
            },
          ]),
        ),
        status: Object.fromEntries(
          Object.keys(c.storage.buckets).map((r) => [
            r,
            { type: "suspended" as const, effective_bucket: null },
          ]),
        ),
        retired_buckets: [],
      }
    : { type: "disabled" as const, retired_buckets: [] };
  return {
    type: "google_managed_data_controls" as const,
    user_profile_id: p.id,
    // Never changes (SDK): the profile's own id, in the label alphabet Cloud Storage accepts.
    bucket_label_value: p.id.toLowerCase(),
    cmek,
    storage,
    updated_at: isoTime(c.updatedAt),
  };
}
