import { canonicalJson } from "../kernel/canonicalJson.js";
import { isoTime } from "../kernel/clock.js";
import { AwakenError, invalid } from "../kernel/errors.js";
import {
  type CredentialAuthCreate,
  type CredentialAuthUpdate,
  type InjectionLocation,
  type PublicCredentialAuth,
  type PublicRefresh,
  SECRET_FIELDS,
} from "./credentialAuth.js";

// Pure rules of credential authoring (wire §5): what a create stores in clear, what it seals, and
// what an update (rotation) changes. No I/O; the service seals and stores what these return.

export interface ResolvedCreate {
  auth: PublicCredentialAuth;
  /** Secret fields to seal into revision 1. */
  secrets: Record<string, string>;
  /** What the credential serves; at most one live credential per vault serves the same thing. */
  usageKey: string;
}

export interface ResolvedUpdate {
  auth: PublicCredentialAuth;
  /** Secret field changes for the next revision: a string replaces, null removes, absent keeps. */
  patch: Record<string, string | null>;
  /** False when the update leaves auth exactly as it was (no new revision is needed). */
  changed: boolean;
}

/** Environment-variable credentials substitute into headers unless told otherwise (the safer place). */
const DEFAULT_INJECTION: InjectionLocation = { header: true, body: false };

export function resolveCredentialCreate(input: CredentialAuthCreate, now: number): ResolvedCreate {
  switch (input.type) {
    case "static_bearer":
      return {
        auth: { type: "static_bearer", mcp_server_url: input.mcp_server_url },
        secrets: { [SECRET_FIELDS.token]: input.token },
        usageKey: mcpUsageKey(input.mcp_server_url),
      };
    case "mcp_oauth": {
      const secrets: Record<string, string> = { [SECRET_FIELDS.accessToken]: input.access_token };
      let refresh: PublicRefresh | null = null;
      if (input.refresh) {
        const r = input.refresh;
        refresh = {
          client_id: r.client_id,
          token_endpoint: r.token_endpoint,
          token_endpoint_auth: { type: r.token_endpoint_auth.type },
          scope: r.scope || null,
          resource: r.resource || null,
        };
        secrets[SECRET_FIELDS.refreshToken] = r.refresh_token;
        if (r.token_endpoint_auth.type !== "none") {
          secrets[SECRET_FIELDS.clientSecret] = r.token_endpoint_auth.client_secret;
        }
      }
      return {
        auth: {
          type: "mcp_oauth",
          mcp_server_url: input.mcp_server_url,
          expires_at: futureExpiry(input.expires_at, now),
          refresh,
        },
        secrets,
        usageKey: mcpUsageKey(input.mcp_server_url),
      };
    }
    case "environment_variable":
      return {
        auth: {
          type: "environment_variable",
          secret_name: input.secret_name,
          networking: input.networking,
          injection_location: injection(DEFAULT_INJECTION, input.injection_location),
        },
        secrets: { [SECRET_FIELDS.secretValue]: input.secret_value },
        usageKey: `env:${input.secret_name}`,
      };
  }
}

export function resolveCredentialUpdate(
  current: PublicCredentialAuth,
  input: CredentialAuthUpdate,
  now: number,
): ResolvedUpdate {
  if (input.type !== current.type) {
    throw immutable(
      "auth.type",
      `a credential's type cannot change (this one is ${current.type}); create a new credential instead`,
    );
  }
  const patch: Record<string, string | null> = {};
  const auth = applyUpdate(current, input, now, patch);
  return {
    auth,
    patch,
    changed: Object.keys(patch).length > 0 || canonicalJson(auth) !== canonicalJson(current),
  };
}

function applyUpdate(
  current: PublicCredentialAuth,
  input: CredentialAuthUpdate,
  now: number,
  patch: Record<string, string | null>,
): PublicCredentialAuth {
  if (current.type === "static_bearer" && input.type === "static_bearer") {
    keep("auth.mcp_server_url", input.mcp_server_url, current.mcp_server_url);
    if (input.token) patch[SECRET_FIELDS.token] = input.token;
    return current;
  }
  if (current.type === "mcp_oauth" && input.type === "mcp_oauth") {
    keep("auth.mcp_server_url", input.mcp_server_url, current.mcp_server_url);
    if (input.access_token) patch[SECRET_FIELDS.accessToken] = input.access_token;
    // Absent keeps the stored expiry, even with a new token (SDK: "send its expires_at too").
    const expires_at =
      input.expires_at === undefined ? current.expires_at : futureExpiry(input.expires_at, now);
    return { ...current, expires_at, refresh: updateRefresh(current.refresh, input.refresh, patch) };
  }
  if (current.type === "environment_variable" && input.type === "environment_variable") {
    keep("auth.secret_name", input.secret_name, current.secret_name);
    if (input.secret_value) patch[SECRET_FIELDS.secretValue] = input.secret_value;
    return {
      ...current,
      // `networking` is replaced as a whole; `injection_location` is merged key by key.
      networking: input.networking ?? current.networking,
      injection_location: injection(current.injection_location, input.injection_location),
    };
  }
  throw new Error("unreachable: auth types were checked to match");
}

function updateRefresh(
  current: PublicRefresh | null,
  input: Extract<CredentialAuthUpdate, { type: "mcp_oauth" }>["refresh"],
  patch: Record<string, string | null>,
): PublicRefresh | null {
  if (input === undefined) return current;
  if (input === null) {
    // Removing the refresh configuration removes its secrets from the next revision too.
    if (current) {
      patch[SECRET_FIELDS.refreshToken] = null;
      patch[SECRET_FIELDS.clientSecret] = null;
    }
    return null;
  }
  if (!current) {
    throw immutable(
      "auth.refresh",
      "this credential was created without a refresh configuration and one cannot be added later " +
        "(client_id and token_endpoint are fixed at creation); create a new credential with `refresh`",
    );
  }
  keep("auth.refresh.client_id", input.client_id, current.client_id);
  keep("auth.refresh.token_endpoint", input.token_endpoint, current.token_endpoint);
  keep("auth.refresh.resource", input.resource, current.resource);
  if (input.refresh_token) patch[SECRET_FIELDS.refreshToken] = input.refresh_token;
  const endpointAuth = input.token_endpoint_auth;
  if (endpointAuth) {
    // An update may rotate the client secret, never switch how the token endpoint authenticates.
    keep("auth.refresh.token_endpoint_auth.type", endpointAuth.type, current.token_endpoint_auth.type);
    if (endpointAuth.client_secret) patch[SECRET_FIELDS.clientSecret] = endpointAuth.client_secret;
  }
  // `""` clears the scope (wire §5); so does null.
  const scope = input.scope === undefined ? current.scope : input.scope || null;
  return { ...current, scope };
}

function injection(
  base: InjectionLocation,
  change: Partial<InjectionLocation> | undefined,
): InjectionLocation {
  const next = { header: change?.header ?? base.header, body: change?.body ?? base.body };
  if (!next.header && !next.body) {
    throw invalid(
      "auth.injection_location: at least one of header or body must stay true, or the secret could never be used",
    );
  }
  return next;
}

/** Expiry must lie ahead: a token already expired at ingress would fail at first use. */
function futureExpiry(value: string | null | undefined, now: number): string | null {
  if (value === undefined || value === null) return null;
  const ms = Date.parse(value);
  if (!(ms > now)) {
    throw invalid(`auth.expires_at: must be in the future (got ${value}; now is ${isoTime(now)})`);
  }
  return isoTime(ms);
}

/** Same MCP server, however the URL was spelled: origin (lower-cased host, no default port) + path. */
export function mcpUsageKey(url: string): string {
  const parsed = new URL(url);
  return `mcp:${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}${parsed.search}`;
}

/** Accepts an immutable field only when it repeats the stored value. */
function keep<T>(field: string, given: T | undefined, stored: T): void {
  if (given === undefined || given === stored) return;
  throw immutable(
    field,
    `cannot change after the credential is created (it is ${JSON.stringify(stored)}); create a new credential (and archive this one) instead`,
  );
}

function immutable(field: string, why: string): AwakenError {
  return new AwakenError("credential_immutable_field", `${field}: ${why}`, { details: { field } });
}
