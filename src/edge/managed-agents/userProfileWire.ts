import type { FastifyRequest } from "fastify";

/**
 * Which shape of user profile a request speaks, by its `anthropic-beta` header: `ga` without a
 * `user-profiles-…` beta (the SDK's `client.userProfiles`), else the dated beta it names (the SDK's
 * `client.beta.userProfiles` sends `user-profiles-2026-08-18`). The SDK's doc comments say which
 * fields each one answers and accepts; the profile stored is the same.
 */
export type UserProfileWire = "ga" | "2026-03-24" | "2026-08-18" | "2026-09-04";

const DATED: ReadonlyArray<Exclude<UserProfileWire, "ga">> = ["2026-03-24", "2026-08-18", "2026-09-04"];

export function userProfileWireOf(request: FastifyRequest): UserProfileWire {
  const header = request.headers["anthropic-beta"];
  const values = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((v) => v.trim());
  // The oldest dated beta named wins: a client naming two gets the shape it can read the least of.
  for (const date of DATED) if (values.includes(`user-profiles-${date}`)) return date;
  return "ga";
}

/** The legacy dated betas serve `external_id` (and 2026-08-18 `external_user_onboarded_at`) instead of the details object. */
export const isLegacyWire = (wire: UserProfileWire) => wire === "2026-03-24" || wire === "2026-08-18";
