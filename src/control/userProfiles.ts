import type { Clock } from "../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { applyMetadataPatch } from "../kernel/metadata.js";
import type { Page } from "../kernel/pagination.js";
import { type Actor, type AdminAuditEntry, auditEntry } from "./adminAudit.js";
import {
  applyDataControlsPatch,
  changesDataControls,
  type GoogleDataControls,
  type GoogleDataControlsPatch,
  initialDataControls,
} from "./googleDataControls.js";
import {
  decodeActionToken,
  encodeActionToken,
  type UserProfileActionClaims,
} from "./userProfileActionTokens.js";

/**
 * User profiles, owned by Control: the end customers a workspace serves, each the data subject of
 * the sessions a request attributes to it (`anthropic-user-profile-id`), so consent is recorded and
 * erasure is done for it by its id. What a hosted provider decides about a profile (enforcement,
 * programs, trust grants, data controls) has no meaning here: it is recorded or answered as
 * "nothing decided", and changes nothing this server does.
 */

export type UserProfileAccessType = "application" | "passthrough";
export type AccountStatus = "active" | "suspended" | "blocked";
export type EntityType = "individual" | "business" | "non_profit" | "government";

/** What the platform states about the entity; every field null until supplied. */
export interface ExternalUserDetails {
  accountStatus: AccountStatus | null;
  country: string | null;
  emailHash: string | null;
  entityType: EntityType | null;
  nameHash: string | null;
  /** Epoch ms. */
  onboardedAt: number | null;
  referenceId: string | null;
}

export interface UserProfileRecord {
  id: string;
  workspaceId: string;
  accessType: UserProfileAccessType;
  name: string | null;
  metadata: Record<string, string>;
  details: ExternalUserDetails;
  /** Recorded only; null: never set (reads as both controls off). */
  dataControls: GoogleDataControls | null;
  createdAt: number;
  updatedAt: number;
}

/** A details change: a field present replaces the stored one (the edge refuses `null` on update). */
export type ExternalUserDetailsPatch = { [K in keyof ExternalUserDetails]?: ExternalUserDetails[K] };

export interface UserProfileCreate {
  accessType?: UserProfileAccessType | undefined;
  name?: string | null | undefined;
  metadata?: Record<string, string> | undefined;
  details?: ExternalUserDetailsPatch | undefined;
}

export interface UserProfileUpdate {
  accessType?: UserProfileAccessType | undefined;
  /** Present: replaces the name (null clears it). */
  name?: string | null | undefined;
  /** Merged: a key set to "" is removed. */
  metadata?: Record<string, string> | undefined;
  details?: ExternalUserDetailsPatch | undefined;
}

export interface UserProfileListQuery {
  limit: number;
  cursor: string | null;
  order: "asc" | "desc";
  orderBy: "created_at" | "name";
}

export interface UserProfileStore {
  create(record: UserProfileRecord, audit: AdminAuditEntry): Promise<void>;
  /** The live profile; a deleted or another workspace's profile is null. */
  get(workspaceId: string, id: string): Promise<UserProfileRecord | null>;
  /**
   * Replaces the live profile with what `change` makes of it, in one transaction with the row
   * locked (PostgreSQL), so concurrent metadata merges do not lose each other; null: not found.
   */
  modify(
    workspaceId: string,
    id: string,
    change: (current: UserProfileRecord) => { next: UserProfileRecord; audit: AdminAuditEntry },
  ): Promise<UserProfileRecord | null>;
  list(workspaceId: string, query: UserProfileListQuery): Promise<Page<UserProfileRecord>>;
  /** Tombstones the live profile (every detail cleared, the id kept); false: not found. */
  delete(workspaceId: string, id: string, now: number, audit: AdminAuditEntry): Promise<boolean>;
}

/** A URL the end customer opens, and when it stops working. */
export interface UserProfileActionUrl {
  url: string;
  expiresAt: number;
}

/** How long an action or enrollment URL works: short, as the SDK's `expires_at` implies. */
export const ACTION_URL_TTL_MS = 15 * 60 * 1000;
/**
 * Where an action URL lands on this server, under the origin the client called; the token is its
 * query (longer than a path parameter may be here; the request log records neither).
 */
export const ACTION_URL_PATH = "/awaken/user_profile_action";

const PROFILE_ID = /^uprof_[A-Za-z0-9]{1,64}$/;
const ONBOARDED_FUTURE_SLACK_MS = 60_000;

export const EMPTY_DETAILS: ExternalUserDetails = {
  accountStatus: null,
  country: null,
  emailHash: null,
  entityType: null,
  nameHash: null,
  onboardedAt: null,
  referenceId: null,
};

export function isUserProfileId(value: string): boolean {
  return PROFILE_ID.test(value);
}

/** The error a request naming an unknown, deleted or foreign profile gets (SDK `UserProfileNotFoundError`). */
export function userProfileNotFound(id: string): AwakenError {
  return new AwakenError(
    "user_profile_not_found",
    `user profile ${JSON.stringify(id)} does not exist in this workspace or was deleted`,
    { details: { error_code: "user_profile_not_found" } },
  );
}

/** The secret-free view an audit entry digests: the profile as the API states it. */
const auditView = (p: UserProfileRecord) => ({
  access_type: p.accessType,
  name: p.name,
  metadata: p.metadata,
  details: p.details,
  data_controls: p.dataControls,
});

export class UserProfileService {
  constructor(
    private readonly store: UserProfileStore,
    private readonly clock: Clock,
    /** Signs action and enrollment URLs; derived from the master key (Control holds it). */
    private readonly actionKey: Buffer,
  ) {}

  async create(by: Actor, input: UserProfileCreate): Promise<UserProfileRecord> {
    const now = this.clock.now();
    const record: UserProfileRecord = {
      id: newId("uprof", now),
      workspaceId: by.workspaceId,
      accessType: input.accessType ?? "application",
      name: input.name ?? null,
      metadata: applyMetadataPatch({}, input.metadata ?? {}),
      details: this.detailsAfter(EMPTY_DETAILS, input.details ?? {}, now),
      dataControls: null,
      createdAt: now,
      updatedAt: now,
    };
    const audit = auditEntry(by, {
      action: "create",
      resourceType: "user_profile",
      resourceId: record.id,
      before: null,
      after: auditView(record),
      at: now,
    });
    await this.store.create(record, audit);
    return record;
  }

  async retrieve(workspaceId: string, id: string): Promise<UserProfileRecord> {
    const found = isUserProfileId(id) ? await this.store.get(workspaceId, id) : null;
    if (!found) throw notFound("user profile", id);
    return found;
  }

  /**
   * The profile a request names in `anthropic-user-profile-id`, live and in the caller's
   * workspace; anything else is `user_profile_not_found` (400), never the profile of another.
   */
  async requireActive(workspaceId: string, id: string): Promise<string> {
    const found = isUserProfileId(id) ? await this.store.get(workspaceId, id) : null;
    if (!found) throw userProfileNotFound(id);
    return found.id;
  }

  async update(by: Actor, id: string, input: UserProfileUpdate): Promise<UserProfileRecord> {
    const now = this.clock.now();
    const updated = await this.modify(by, id, now, (current) => ({
      ...current,
      accessType: input.accessType ?? current.accessType,
      name: input.name === undefined ? current.name : input.name,
      metadata: applyMetadataPatch(current.metadata, input.metadata ?? {}, { emptyStringDeletes: true }),
      details: this.detailsAfter(current.details, input.details ?? {}, now),
    }));
    return updated;
  }

  list(workspaceId: string, query: UserProfileListQuery): Promise<Page<UserProfileRecord>> {
    return this.store.list(workspaceId, query);
  }

  /**
   * Tombstones the profile: it is no longer retrievable, listed or accepted in a request's header.
   * Its captured content is erased by the caller first (the Coordinator holds it; see
   * `edge/managed-agents/userProfileDeletion.ts`).
   */
  async delete(by: Actor, id: string): Promise<void> {
    const now = this.clock.now();
    const current = await this.retrieve(by.workspaceId, id);
    const audit = auditEntry(by, {
      action: "delete",
      resourceType: "user_profile",
      resourceId: id,
      before: auditView(current),
      after: null,
      at: now,
    });
    if (!(await this.store.delete(by.workspaceId, id, now, audit))) throw notFound("user profile", id);
  }

  /** The controls as recorded (both off when never set). */
  async dataControls(
    workspaceId: string,
    id: string,
  ): Promise<{ profile: UserProfileRecord; controls: GoogleDataControls }> {
    const profile = await this.retrieve(workspaceId, id);
    return { profile, controls: profile.dataControls ?? initialDataControls(profile.createdAt) };
  }

  async updateDataControls(
    by: Actor,
    id: string,
    patch: GoogleDataControlsPatch,
  ): Promise<{ profile: UserProfileRecord; controls: GoogleDataControls }> {
    // Nothing asked (`{}`, as the SDK's example sends): the controls as they are, nothing written.
    if (!changesDataControls(patch)) return this.dataControls(by.workspaceId, id);
    const now = this.clock.now();
    const profile = await this.modify(by, id, now, (current) => ({
      ...current,
      dataControls: applyDataControlsPatch(
        current.dataControls ?? initialDataControls(current.createdAt),
        patch,
        now,
      ),
    }));
    return { profile, controls: profile.dataControls ?? initialDataControls(profile.createdAt) };
  }

  /**
   * A URL on `origin` (the public origin the client called) that the profile's end customer opens,
   * signed and short-lived. Opening it changes nothing here: there is no hosted program to enroll in.
   */
  async actionUrl(
    workspaceId: string,
    id: string,
    action: UserProfileActionClaims["action"],
    origin: string,
  ): Promise<UserProfileActionUrl> {
    await this.retrieve(workspaceId, id);
    const expiresAt = this.clock.now() + ACTION_URL_TTL_MS;
    const token = encodeActionToken(this.actionKey, { workspaceId, userProfileId: id, action, expiresAt });
    return { url: `${origin}${ACTION_URL_PATH}?token=${token}`, expiresAt };
  }

  /** What an opened action URL names, or null: forged, expired, or its profile since deleted. */
  async openActionUrl(token: string): Promise<UserProfileActionClaims | null> {
    const claims = decodeActionToken(this.actionKey, token);
    if (!claims || claims.expiresAt <= this.clock.now()) return null;
    const live = await this.store.get(claims.workspaceId, claims.userProfileId);
    return live ? claims : null;
  }

  private async modify(
    by: Actor,
    id: string,
    now: number,
    change: (current: UserProfileRecord) => UserProfileRecord,
  ): Promise<UserProfileRecord> {
    const updated = isUserProfileId(id)
      ? await this.store.modify(by.workspaceId, id, (current) => {
          const next = { ...change(current), updatedAt: now };
          const audit = auditEntry(by, {
            action: "update",
            resourceType: "user_profile",
            resourceId: id,
            before: auditView(current),
            after: auditView(next),
            at: now,
          });
          return { next, audit };
        })
      : null;
    if (!updated) throw notFound("user profile", id);
    return updated;
  }

  /** Details after a patch; `onboarded_at` may be at most a minute ahead of this server's clock. */
  private detailsAfter(current: ExternalUserDetails, patch: ExternalUserDetailsPatch, now: number) {
    const next = { ...current };
    for (const [key, value] of Object.entries(patch) as Array<[keyof ExternalUserDetails, never]>) {
      if (value !== undefined) next[key] = value;
    }
    if (patch.onboardedAt != null && patch.onboardedAt > now + ONBOARDED_FUTURE_SLACK_MS)
      throw invalid("external_user_details.onboarded_at: must be no more than 1 minute in the future");
    return next;
  }
}
