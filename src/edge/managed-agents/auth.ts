import type { FastifyRequest } from "fastify";
import type { IamService, Principal } from "../../control/iamService.js";
import { AwakenError } from "../../kernel/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * SDK 1.x sends the API key as `Authorization: Bearer`, SDK 0.x and curl examples as `X-Api-Key`
 * (wire §1.1): accept both. `anthropic-version` and `anthropic-beta` are tolerated, not required.
 */
export function apiKeyFrom(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (typeof auth === "string") {
    const match = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (match?.[1]) return match[1].trim();
  }
  const key = request.headers["x-api-key"];
  if (typeof key === "string" && key.trim()) return key.trim();
  return null;
}

export async function authenticate(iam: IamService, request: FastifyRequest): Promise<Principal> {
  const key = apiKeyFrom(request);
  if (!key) {
    throw new AwakenError(
      "unauthenticated",
      "Missing API key: send it as `Authorization: Bearer <key>` or `x-api-key: <key>`.",
    );
  }
  const principal = await iam.authenticate(key);
  if (!principal) throw new AwakenError("unauthenticated", "Invalid API key.");
  return principal;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AwakenError("unauthenticated", "Request is not authenticated.");
  return request.principal;
}
