// Credential auth shapes (wire §5; SDK resources/beta/vaults/credentials). The input types are what
// the edge hands over after validating a body; `PublicCredentialAuth` is the secret-free part that
// is stored in clear and returned, exactly the wire's "returned" column.

export const CREDENTIAL_AUTH_TYPES = ["static_bearer", "mcp_oauth", "environment_variable"] as const;
export type CredentialAuthType = (typeof CREDENTIAL_AUTH_TYPES)[number];

export type TokenEndpointAuthType = "none" | "client_secret_basic" | "client_secret_post";

export type CredentialNetworking = { type: "unrestricted" } | { type: "limited"; allowed_hosts: string[] };

export interface InjectionLocation {
  header: boolean;
  body: boolean;
}

export interface PublicRefresh {
  client_id: string;
  token_endpoint: string;
  token_endpoint_auth: { type: TokenEndpointAuthType };
  scope: string | null;
  resource: string | null;
}

export type PublicCredentialAuth =
  | { type: "static_bearer"; mcp_server_url: string }
  | { type: "mcp_oauth"; mcp_server_url: string; expires_at: string | null; refresh: PublicRefresh | null }
  | {
      type: "environment_variable";
      secret_name: string;
      networking: CredentialNetworking;
      injection_location: InjectionLocation;
    };

/**
 * The names of the secret fields sealed per revision. Only these ever reach the SecretStore, and no
 * other part of a credential is secret.
 */
export const SECRET_FIELDS = {
  token: "token",
  accessToken: "access_token",
  refreshToken: "refresh_token",
  clientSecret: "client_secret",
  secretValue: "secret_value",
} as const;

// ---------------------------------------------------------------------------------------------------
// Inputs (validated bodies)
// ---------------------------------------------------------------------------------------------------

export type TokenEndpointAuthInput =
  | { type: "none" }
  | { type: "client_secret_basic" | "client_secret_post"; client_secret: string };

export type CredentialAuthCreate =
  | { type: "static_bearer"; token: string; mcp_server_url: string }
  | {
      type: "mcp_oauth";
      access_token: string;
      mcp_server_url: string;
      expires_at?: string | null | undefined;
      refresh?:
        | {
            refresh_token: string;
            client_id: string;
            token_endpoint: string;
            token_endpoint_auth: TokenEndpointAuthInput;
            scope?: string | null | undefined;
            resource?: string | null | undefined;
          }
        | null
        | undefined;
    }
  | {
      type: "environment_variable";
      secret_name: string;
      secret_value: string;
      networking: CredentialNetworking;
      injection_location?: Partial<InjectionLocation> | undefined;
    };

/**
 * Update inputs. The immutable fields (`mcp_server_url`, `secret_name`, `client_id`, …) are accepted
 * here only so the service can answer "cannot change" by name instead of "unknown field".
 */
export type CredentialAuthUpdate =
  | { type: "static_bearer"; token?: string | null | undefined; mcp_server_url?: string | undefined }
  | {
      type: "mcp_oauth";
      access_token?: string | null | undefined;
      expires_at?: string | null | undefined;
      mcp_server_url?: string | undefined;
      refresh?:
        | {
            refresh_token?: string | null | undefined;
            scope?: string | null | undefined;
            token_endpoint_auth?:
              | {
                  type: "client_secret_basic" | "client_secret_post";
                  client_secret?: string | null | undefined;
                }
              | undefined;
            client_id?: string | undefined;
            token_endpoint?: string | undefined;
            resource?: string | null | undefined;
          }
        | null
        | undefined;
    }
  | {
      type: "environment_variable";
      secret_value?: string | null | undefined;
      networking?: CredentialNetworking | null | undefined;
      injection_location?: Partial<InjectionLocation> | undefined;
      secret_name?: string | undefined;
    };
