/**
 * Vaults and credentials request schemas (wire §2.7, §5; param types from `@anthropic-ai/sdk`
 * resources/beta/vaults). Secret fields have their own fixed error messages that never quote the
 * value, so a malformed secret cannot come back in an error body. Immutable fields are accepted on
 * update only so the service can reject a change by name (`credential_immutable_field`).
 */
import { z } from "zod";
import {
  boundedString,
  discriminatorError,
  metadataPatchSchema,
  metadataSchema,
  paginationQuery,
  queryBoolean,
  timestampSchema,
} from "./common.js";

export const VAULT_LIMITS = {
  displayName: 255,
  /** Not stated by the SDK; generous for JWTs and PEM-free tokens while bounding one sealed row. */
  secret: 16_384,
  url: 2048,
  secretName: 256,
  allowedHosts: 16,
  hostname: 253,
  clientId: 1024,
  scope: 2048,
} as const;

/** A write-only field: its message says what is wrong without ever containing the value. */
function secretField() {
  const message = `expected a non-empty string of at most ${VAULT_LIMITS.secret} characters (write-only; the value is never echoed)`;
  return z.string({ error: message }).min(1, { error: message }).max(VAULT_LIMITS.secret, { error: message });
}

function httpUrl() {
  return boundedString(1, VAULT_LIMITS.url).refine(isHttpUrl, {
    error: "expected an absolute http:// or https:// URL",
  });
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

const LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const HOSTNAME = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`);
const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** `api.example.com`, `192.0.2.1` or `*.example.com`; no scheme, port, path or IPv6 (SDK docs). */
const allowedHost = z
  .string()
  .max(VAULT_LIMITS.hostname)
  .refine((h) => IPV4.test(h) || HOSTNAME.test(h), {
    error: "expected a hostname, an IPv4 address or a *.domain wildcard (no scheme, port or path)",
  });

const networkingSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("unrestricted") }),
    z.strictObject({
      type: z.literal("limited"),
      allowed_hosts: z.array(allowedHost).max(VAULT_LIMITS.allowedHosts),
    }),
  ],
  { error: discriminatorError("networking type") },
);

const injectionLocationSchema = z.strictObject({
  header: z.boolean().optional(),
  body: z.boolean().optional(),
});

const secretName = boundedString(1, VAULT_LIMITS.secretName).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  error: "expected an environment variable name (letters, digits and _, not starting with a digit)",
});
const optionalText = (max: number) => z.string().max(max).nullish();

const tokenEndpointAuthCreate = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("none") }),
    z.strictObject({ type: z.literal("client_secret_basic"), client_secret: secretField() }),
    z.strictObject({ type: z.literal("client_secret_post"), client_secret: secretField() }),
  ],
  { error: discriminatorError("token_endpoint_auth type") },
);

const authCreateSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("static_bearer"), token: secretField(), mcp_server_url: httpUrl() }),
    z.strictObject({
      type: z.literal("mcp_oauth"),
      access_token: secretField(),
      mcp_server_url: httpUrl(),
      expires_at: timestampSchema.nullish(),
      refresh: z
        .strictObject({
          refresh_token: secretField(),
          client_id: boundedString(1, VAULT_LIMITS.clientId),
          token_endpoint: httpUrl(),
          token_endpoint_auth: tokenEndpointAuthCreate,
          scope: optionalText(VAULT_LIMITS.scope),
          resource: optionalText(VAULT_LIMITS.url),
        })
        .nullish(),
    }),
    z.strictObject({
      type: z.literal("environment_variable"),
      secret_name: secretName,
      secret_value: secretField(),
      networking: networkingSchema,
      injection_location: injectionLocationSchema.optional(),
    }),
  ],
  { error: discriminatorError("auth type") },
);

const tokenEndpointAuthUpdate = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("client_secret_basic"), client_secret: secretField().nullish() }),
    z.strictObject({ type: z.literal("client_secret_post"), client_secret: secretField().nullish() }),
  ],
  { error: discriminatorError("token_endpoint_auth type") },
);

const authUpdateSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({
      type: z.literal("static_bearer"),
      token: secretField().nullish(),
      mcp_server_url: z.string().optional(),
    }),
    z.strictObject({
      type: z.literal("mcp_oauth"),
      access_token: secretField().nullish(),
      expires_at: timestampSchema.nullish(),
      mcp_server_url: z.string().optional(),
      refresh: z
        .strictObject({
          refresh_token: secretField().nullish(),
          scope: optionalText(VAULT_LIMITS.scope),
          token_endpoint_auth: tokenEndpointAuthUpdate.optional(),
          client_id: z.string().optional(),
          token_endpoint: z.string().optional(),
          resource: z.string().nullish(),
        })
        .nullish(),
    }),
    z.strictObject({
      type: z.literal("environment_variable"),
      secret_value: secretField().nullish(),
      networking: networkingSchema.nullish(),
      injection_location: injectionLocationSchema.optional(),
      secret_name: z.string().optional(),
    }),
  ],
  { error: discriminatorError("auth type") },
);

export const createVaultBodySchema = z.strictObject({
  display_name: boundedString(1, VAULT_LIMITS.displayName),
  metadata: metadataSchema.optional(),
});

export const updateVaultBodySchema = z.strictObject({
  display_name: boundedString(1, VAULT_LIMITS.displayName).nullish(),
  metadata: metadataPatchSchema.nullish(),
});

export const listVaultsQuerySchema = z.strictObject({
  include_archived: queryBoolean.default(false),
  ...paginationQuery,
});

export const createCredentialBodySchema = z.strictObject({
  auth: authCreateSchema,
  display_name: boundedString(1, VAULT_LIMITS.displayName).nullish(),
  metadata: metadataSchema.optional(),
});

export const updateCredentialBodySchema = z.strictObject({
  auth: authUpdateSchema.optional(),
  display_name: boundedString(1, VAULT_LIMITS.displayName).nullish(),
  metadata: metadataPatchSchema.nullish(),
});

export const listCredentialsQuerySchema = listVaultsQuerySchema;

/**
 * Where a credential body's secrets sit if a body is ever logged (under `body`, `req.body`, or as the
 * object itself). Request bodies are not logged today; this keeps a future debug line from leaking.
 */
export const SECRET_LOG_PATHS: string[] = ["auth", "body.auth", "req.body.auth", "request.body.auth"].flatMap(
  (prefix) =>
    [
      "token",
      "access_token",
      "secret_value",
      "refresh.refresh_token",
      "refresh.token_endpoint_auth.client_secret",
    ].map((field) => `${prefix}.${field}`),
);
