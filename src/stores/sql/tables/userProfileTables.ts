/** Control's user profiles (migration 030); a deleted profile is a tombstone (`deleted_at`). */
export interface UserProfileTables {
  user_profiles: {
    id: string;
    workspace_id: string;
    access_type: string;
    name: string | null;
    /** The ASCII-lowercased name ("" when unnamed): the key of `order_by=name`. */
    name_key: string;
    /** 1 when the profile has no name (sorted last in either direction), else 0. */
    unnamed: number;
    metadata_json: string;
    /** `external_user_details`, every field present (null: not supplied). */
    details_json: string;
    /** Google data controls as last set (recorded only); null: never set. */
    data_controls_json: string | null;
    created_at: number;
    updated_at: number;
    deleted_at: number | null;
  };
}
