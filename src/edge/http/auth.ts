import type { FastifyRequest } from "fastify";
import { ACCESS_TOKEN_PREFIX } from "../../control/accessTokens.js";
import type { Actor } from "../../control/adminAudit.js";
import { type ApiKeyRole, roleIncludes } from "../../control/apiKeyRoles.js";
import type { CallerScope } from "../../control/callerScope.js";
import type { IamService } from "../../control/iamService.js";
import { EnvironmentKeyService } from "../../coordinator/environmentKeyService.js";
import type { WorkItemRecord } from "../../coordinator/workLease.js";
import { leaseLost } from "../../coordinator/workLease.js";
import { WorkQueueService } from "../../coordinator/workQueueService.js";
import { AwakenError } from "../../kernel/errors.js";

/**
 * Who a request authenticated as. Every kind carries the workspace it acts in; routes that only
 * need that read `principalOf(request).workspaceId`.
 * - `api_key`: the normal API (agents, environments, sessions, …);
 * - `environment_key`: one self_hosted environment's worker, on that environment's work routes;
 * - `sessions_token`: one delivery (work id, epoch) of one work item, minted by a poll and carried
 *   in its `secret`: that item's heartbeat and stop, and its session's retrieve and events.
 */
export type AuthPrincipal =
  | {
      kind: "api_key";
      workspaceId: string;
      /** The key, or for an application access token the key that minted it. */
      apiKeyId: string;
      role: ApiKeyRole;
      scope: CallerScope;
      /** Set when the credential is an application access token. */
      accessTokenId?: string;
      /** When that access token expires (epoch ms): its long-lived responses end then. */
      expiresAt?: number;
    }
  | { kind: "environment_key"; workspaceId: string; environmentId: string; keyId: string }
  | {
      kind: "sessions_token";
      workspaceId: string;
      environmentId: string;
      sessionId: string;
      workId: string;
      epoch: number;
      /** The work item as it stood when the request was authenticated. */
      item: WorkItemRecord;
    };

export type PrincipalKind = AuthPrincipal["kind"];

/**
 * What a route accepts, declared on the route (`config.access`). Routes that declare nothing accept
 * an API key only. The params name what an environment key or sessions token must be bound to.
 */
export interface RouteAccess {
  accepts: readonly PrincipalKind[];
  /** Route param holding the environment id an environment key / sessions token must belong to. */
  environmentParam?: string;
  /** Route param holding the session id a sessions token must be bound to. */
  sessionParam?: string;
  /** Route param holding the work id a sessions token must be bound to. */
  workParam?: string;
  /**
   * The sessions token must still hold its lease's delivery (not stopped, not re-delivered). Work
   * routes leave this off: heartbeat and stop answer a stale delivery with the wire's own errors.
   */
  liveLease?: boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    principal?: AuthPrincipal;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

export const API_KEY_ONLY: RouteAccess = { accepts: ["api_key"] };

export interface AuthDeps {
  iam: Pick<IamService, "authenticate">;
  /** The coordinator's (self-hosted environments): absent on Control's door, which takes API keys only. */
  environmentKeys?: EnvironmentKeyService | undefined;
  workQueue?: WorkQueueService | undefined;
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

/** Resolves the request's credential to a principal of whichever kind it is (prefix, then lookup). */
export async function authenticate(deps: AuthDeps, request: FastifyRequest): Promise<AuthPrincipal> {
  const credential = apiKeyFrom(request);
  if (!credential) {
    throw new AwakenError(
      "unauthenticated",
      "Missing API key: send it as `Authorization: Bearer <key>` or `x-api-key: <key>`.",
    );
  }
  if (WorkQueueService.isSessionsToken(credential)) {
    const binding = await deps.workQueue?.authenticateToken(credential);
    if (binding) return { kind: "sessions_token", ...binding };
  } else if (EnvironmentKeyService.isEnvironmentKey(credential)) {
    const key = await deps.environmentKeys?.authenticate(credential);
    if (key) {
      return {
        kind: "environment_key",
        workspaceId: key.workspaceId,
        environmentId: key.environmentId,
        keyId: key.id,
      };
    }
  }
  // Any string may be an API key (`AWAKEN_API_KEY` is operator-chosen), prefixes included.
  const principal = await deps.iam.authenticate(credential);
  if (!principal) throw new AwakenError("unauthenticated", invalidCredentialMessage(credential));
  // A Control that predates session namespaces sends a scope without one.
  const scope = { ...principal.scope, sessionNamespace: principal.scope.sessionNamespace ?? null };
  return { kind: "api_key", ...principal, scope };
}

function invalidCredentialMessage(credential: string): string {
  if (WorkQueueService.isSessionsToken(credential)) return "Invalid sessions token.";
  if (EnvironmentKeyService.isEnvironmentKey(credential)) return "Invalid or revoked environment key.";
  if (credential.startsWith(ACCESS_TOKEN_PREFIX))
    return "Invalid, expired or revoked access token: ask the application's backend for a new one.";
  return "Invalid API key.";
}

const ROLE_NAMES: Record<ApiKeyRole, string> = {
  runtime: "a runtime, builder or admin",
  builder: "a builder or admin",
  admin: "an admin",
};

const KIND_NAMES: Record<PrincipalKind, string> = {
  api_key: "an API key",
  environment_key: "an environment key",
  sessions_token: "a work item's sessions token",
};

function wrongKind(principal: AuthPrincipal, access: RouteAccess): AwakenError {
  const accepted = access.accepts.map((k) => KIND_NAMES[k]).join(" or ");
  const reach =
    principal.kind === "environment_key"
      ? ` An environment key authenticates only the work routes of its environment (${principal.environmentId}).`
      : principal.kind === "sessions_token"
        ? ` A sessions token authenticates only its work item's heartbeat and stop and its session's retrieve and events (session ${principal.sessionId}).`
        : "";
  return new AwakenError(
    "permission_denied",
    `This route accepts ${accepted}, not ${KIND_NAMES[principal.kind]}.${reach}`,
  );
}

function param(request: FastifyRequest, name: string | undefined): string | undefined {
  if (!name) return undefined;
  return (request.params as Record<string, string | undefined> | undefined)?.[name];
}

/**
 * Checks the principal against the route's declared access, and an API key's role against what the
 * route needs (`needed`, the adapter's answer for it); throws 403 (or the lease's 412).
 */
export function authorize(
  principal: AuthPrincipal,
  request: FastifyRequest,
  needed: ApiKeyRole = "runtime",
): void {
  const access = request.routeOptions.config?.access ?? API_KEY_ONLY;
  if (!access.accepts.includes(principal.kind)) throw wrongKind(principal, access);
  if (principal.kind === "api_key") {
    if (!roleIncludes(principal.role, needed)) {
      throw new AwakenError(
        "permission_denied",
        `${request.method} ${request.routeOptions.url ?? request.url} needs ${ROLE_NAMES[needed]} key; this key's role is ${principal.role}.`,
      );
    }
    return;
  }
  const environmentId = param(request, access.environmentParam);
  if (environmentId !== undefined && environmentId !== principal.environmentId) {
    throw new AwakenError(
      "permission_denied",
      `This credential belongs to environment ${principal.environmentId}; it cannot act on environment ${environmentId}.`,
    );
  }
  if (principal.kind !== "sessions_token") return;
  const sessionId = param(request, access.sessionParam);
  if (sessionId !== undefined && sessionId !== principal.sessionId) {
    throw new AwakenError(
      "permission_denied",
      `This sessions token is scoped to session ${principal.sessionId}; it cannot reach session ${sessionId}.`,
    );
  }
  const workId = param(request, access.workParam);
  if (workId !== undefined && workId !== principal.workId) {
    throw new AwakenError(
      "permission_denied",
      `This sessions token is scoped to work ${principal.workId}; it cannot act on work ${workId}.`,
    );
  }
  if (access.liveLease) {
    const { item } = principal;
    if (item.epoch !== principal.epoch) {
      throw leaseLost(
        principal.workId,
        `the work was delivered again (delivery ${item.epoch}) after this token's delivery ${principal.epoch}`,
      );
    }
    if (item.state === "stopped") throw leaseLost(principal.workId, "the work is stopped");
  }
}

export function principalOf(request: FastifyRequest): AuthPrincipal {
  if (!request.principal) throw new AwakenError("unauthenticated", "Request is not authenticated.");
  return request.principal;
}

/**
 * The workspace a request's change lands in and who makes it, for the admin audit: an API key by
 * its id (an access token by its minting key's), any other principal by its kind and id.
 */
export function actorOf(request: FastifyRequest): Actor {
  const principal = principalOf(request);
  const actor =
    principal.kind === "api_key"
      ? principal.apiKeyId
      : principal.kind === "environment_key"
        ? `environment_key:${principal.keyId}`
        : "sessions_token";
  return { workspaceId: principal.workspaceId, actor };
}

/** Who a principal is, as a stable string (an MCP session belongs to it). */
export function principalKey(principal: AuthPrincipal): string {
  switch (principal.kind) {
    case "api_key":
      return principal.accessTokenId !== undefined
        ? `token:${principal.accessTokenId}`
        : `key:${principal.apiKeyId}`;
    case "environment_key":
      return `environment_key:${principal.keyId}`;
    case "sessions_token":
      return `sessions_token:${principal.workId}:${principal.epoch}`;
  }
}
