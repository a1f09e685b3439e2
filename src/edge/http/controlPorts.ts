/**
 * What Control serves the Coordinator: IAM (authentication included), authoring, vault ingress,
 * custody, the audits, consent and user profiles. The Coordinator reaches nothing else of Control.
 */
export const CONTROL_METHODS = {
  iam: ["authenticate", "createApiKey", "listApiKeys", "revokeApiKey", "mintAccessToken"],
  agents: ["create", "retrieve", "update", "archive", "list", "listVersions", "resolveForSession"],
  vaults: ["create", "get", "getWritable", "update", "list", "archive", "delete"],
  credentials: ["create", "retrieve", "update", "list", "listRevisions", "archive", "delete", "validate"],
  credentialOpens: ["list"],
  adminAudit: ["list"],
  consents: ["set", "list", "consented"],
  // User profiles: the data subjects a workspace serves; the signing key of their URLs stays in Control.
  userProfiles: [
    "create",
    "retrieve",
    "requireActive",
    "update",
    "list",
    "delete",
    "dataControls",
    "updateDataControls",
    "actionUrl",
    "openActionUrl",
  ],
  custody: ["pin", "open", "openSecret", "secretVariables"],
  // Push configs' tokens are sealed under Control's key; only identities of push configs open.
  pushSealer: ["seal", "openField"],
  // Session repositories' tokens, likewise: only `repo:` identities open.
  repoSealer: ["seal", "openField"],
  // MCP tunnels' connector tokens, likewise: only `tunnel:` identities open.
  tunnelSealer: ["seal", "openField"],
} as const;
