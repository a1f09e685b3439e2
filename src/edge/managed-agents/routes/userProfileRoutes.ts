import type { FastifyInstance, FastifyRequest } from "fastify";
import type { UserProfileCreate, UserProfileUpdate } from "../../../control/userProfiles.js";
import { isoTime } from "../../../kernel/clock.js";
import { invalid } from "../../../kernel/errors.js";
import { actorOf, principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { pageDto } from "../dto.js";
import { toMs } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  actionUrlBodySchema,
  dataControlsBodySchema,
  emptyBodySchema,
  userProfileBodySchema,
  userProfileListQuerySchema,
} from "../schemas/userProfiles.js";
import { deleteUserProfile } from "../userProfileDeletion.js";
import { dataControlsDto, deletedUserProfileDto, userProfileDto } from "../userProfileDto.js";
import { isLegacyWire, type UserProfileWire, userProfileWireOf } from "../userProfileWire.js";

type ProfileParams = { Params: { user_profile_id: string }; Querystring: RawQuery };

/** What the routes need: Control's profiles, and (on a coordinator) the erasure a delete does. */
export type UserProfileRouteDeps = Pick<EdgeServices, "userProfiles"> & {
  dataSubjects?: Partial<EdgeServices["dataSubjects"]>;
};

type ParsedBody = {
  access_type?: "application" | "passthrough" | null | undefined;
  metadata?: Record<string, string> | undefined;
  name?: string | null | undefined;
  external_id?: string | null | undefined;
  external_user_onboarded_at?: string | undefined;
  external_user_details?:
    | {
        account_status?: "active" | "suspended" | "blocked" | null | undefined;
        country?: string | null | undefined;
        email_hash?: string | null | undefined;
        entity_type?: "individual" | "business" | "non_profit" | "government" | null | undefined;
        name_hash?: string | null | undefined;
        onboarded_at?: string | undefined;
        reference_id?: string | null | undefined;
      }
    | undefined;
};

/** The body in the service's terms; the legacy betas' `external_id` is the details' `reference_id`. */
function changeOf(body: ParsedBody, wire: UserProfileWire): UserProfileCreate & UserProfileUpdate {
  const d = body.external_user_details;
  const details = isLegacyWire(wire)
    ? {
        ...(body.external_id !== undefined ? { referenceId: body.external_id } : {}),
        ...(body.external_user_onboarded_at !== undefined
          ? { onboardedAt: toMs(body.external_user_onboarded_at) ?? null }
          : {}),
      }
    : d === undefined
      ? {}
      : {
          ...(d.account_status !== undefined ? { accountStatus: d.account_status } : {}),
          ...(d.country !== undefined ? { country: d.country } : {}),
          ...(d.email_hash !== undefined ? { emailHash: d.email_hash } : {}),
          ...(d.entity_type !== undefined ? { entityType: d.entity_type } : {}),
          ...(d.name_hash !== undefined ? { nameHash: d.name_hash } : {}),
          ...(d.onboarded_at !== undefined ? { onboardedAt: toMs(d.onboarded_at) ?? null } : {}),
          ...(d.reference_id !== undefined ? { referenceId: d.reference_id } : {}),
        };
  return {
    ...(body.access_type != null ? { accessType: body.access_type } : {}),
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    details,
  };
}

/** The origin the client called: where an action URL lands (the A2A agent card's rule). */
const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/**
 * User profiles (SDK `userProfiles` and `beta.userProfiles`, the same paths; the beta header picks
 * the shape), Control's identity records, served by the coordinator and by Control's door. A
 * delete erases the profile's captured content (`userProfileDeletion.ts`), which only a
 * coordinator holds: Control's door refuses it.
 */
export function userProfileRoutes(app: FastifyInstance, deps: UserProfileRouteDeps): void {
  const profiles = () => deps.userProfiles;

  app.post("/v1/user_profiles", async (request) => {
    const wire = userProfileWireOf(request);
    const body = parseBody(userProfileBodySchema(wire, false), request.body) as ParsedBody;
    return userProfileDto(await profiles().create(actorOf(request), changeOf(body, wire)), wire);
  });

  app.get<ProfileParams>("/v1/user_profiles/:user_profile_id", async (request) => {
    const found = await profiles().retrieve(principalOf(request).workspaceId, request.params.user_profile_id);
    return userProfileDto(found, userProfileWireOf(request));
  });

  app.post<ProfileParams>("/v1/user_profiles/:user_profile_id", async (request) => {
    const wire = userProfileWireOf(request);
    const body = parseBody(userProfileBodySchema(wire, true), request.body ?? {}) as ParsedBody;
    const updated = await profiles().update(
      actorOf(request),
      request.params.user_profile_id,
      changeOf(body, wire),
    );
    return userProfileDto(updated, wire);
  });

  app.get<{ Querystring: RawQuery }>("/v1/user_profiles", async (request) => {
    const wire = userProfileWireOf(request);
    const query = parseQuery(userProfileListQuerySchema, request.query);
    if (query.enforcement_status !== undefined && wire !== "ga")
      throw invalid(`enforcement_status: not accepted under the user-profiles-${wire} beta header`);
    // Every profile here is `unrestricted`: a filter without that value matches none.
    if (query.enforcement_status !== undefined && !query.enforcement_status.includes("unrestricted"))
      return { data: [], next_page: null };
    const page = await profiles().list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      order: query.order,
      orderBy: query.order_by,
    });
    return pageDto(page, (p) => userProfileDto(p, wire));
  });

  app.delete<ProfileParams>("/v1/user_profiles/:user_profile_id", async (request) => {
    const erasure = deps.dataSubjects?.erasure;
    if (!erasure)
      throw invalid(
        "deleting a user profile erases its captured content, which the coordinator holds: delete it through a coordinator's URL",
      );
    const id = request.params.user_profile_id;
    await deleteUserProfile({ userProfiles: profiles(), erasure }, actorOf(request), id);
    return deletedUserProfileDto(id);
  });

  app.post<ProfileParams>("/v1/user_profiles/:user_profile_id/enrollment_url", async (request) => {
    if (request.body !== undefined && request.body !== null) parseBody(emptyBodySchema, request.body);
    const { workspaceId } = principalOf(request);
    const made = await profiles().actionUrl(
      workspaceId,
      request.params.user_profile_id,
      "enrollment",
      originOf(request),
    );
    return { type: "enrollment_url", url: made.url, expires_at: isoTime(made.expiresAt) };
  });

  app.post<ProfileParams>("/v1/user_profiles/:user_profile_id/action_urls", async (request) => {
    const { action } = parseBody(actionUrlBodySchema, request.body);
    const made = await profiles().actionUrl(
      principalOf(request).workspaceId,
      request.params.user_profile_id,
      action.type,
      originOf(request),
    );
    return { type: "user_profile_action_url", url: made.url, expires_at: isoTime(made.expiresAt) };
  });

  app.get<ProfileParams>(
    "/v1/user_profiles/:user_profile_id/providers/google/data_controls",
    async (request) => {
      const { profile, controls } = await profiles().dataControls(
        principalOf(request).workspaceId,
        request.params.user_profile_id,
      );
      return dataControlsDto(profile, controls);
    },
  );

  app.post<ProfileParams>(
    "/v1/user_profiles/:user_profile_id/providers/google/data_controls",
    async (request) => {
      const body = parseBody(dataControlsBodySchema, request.body ?? {});
      const { profile, controls } = await profiles().updateDataControls(
        actorOf(request),
        request.params.user_profile_id,
        body,
      );
      return dataControlsDto(profile, controls);
    },
  );
}
