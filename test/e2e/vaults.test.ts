import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { all, BAD_REQUEST, expectApiError, idsOf, NOT_FOUND, RFC3339 } from "../support/sdkHelpers.js";
import { plantedSecret, startVaultTestServer, type VaultTestServer } from "../support/vaultServer.js";

// Vaults and credentials through the official SDK over real HTTP (wire §2.7, §5).

let t: VaultTestServer;
let client: Anthropic;
beforeAll(async () => {
  t = await startVaultTestServer();
  client = t.client;
});
afterAll(async () => {
  await t.close();
});

const MCP_URL = "https://mcp.example.com/mcp";
const FUTURE = "2099-01-01T00:00:00Z";
const CONFLICT = { status: 409, type: "conflict_error" } as const;

async function newVault(name = "Alice") {
  return client.beta.vaults.create({ display_name: name, metadata: { user: "u1" } });
}

describe("vaults", () => {
  it("create, retrieve, update (metadata patch), archive and delete", async () => {
    const vault = await newVault();
    expect(vault).toMatchObject({
      type: "vault",
      display_name: "Alice",
      metadata: { user: "u1" },
      archived_at: null,
    });
    expect(vault.id).toMatch(/^vlt_/);
    expect(vault.created_at).toMatch(RFC3339);
    expect(await client.beta.vaults.retrieve(vault.id)).toEqual(vault);

    const updated = await client.beta.vaults.update(vault.id, {
      display_name: "Alice B.",
      metadata: { user: null, tier: "pro" },
    });
    expect(updated).toMatchObject({ display_name: "Alice B.", metadata: { tier: "pro" } });

    const archived = await client.beta.vaults.archive(vault.id);
    expect(archived.archived_at).toMatch(RFC3339);
    await expectApiError(
      client.beta.vaults.update(vault.id, { display_name: "x" }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [/archived/],
      },
    );

    expect(await client.beta.vaults.delete(vault.id)).toEqual({ id: vault.id, type: "vault_deleted" });
    await expectApiError(client.beta.vaults.retrieve(vault.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.beta.vaults.delete(vault.id), Anthropic.NotFoundError, NOT_FOUND);
  });

  it("list pages with next_page and hides archived vaults unless include_archived", async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await newVault(`list-${i}`));
    await client.beta.vaults.archive(made[0]!.id);
    const page = await client.beta.vaults.list({ limit: 2 });
    expect(page.data).toHaveLength(2);
    const listed = idsOf(await all(client.beta.vaults.list({ limit: 2 })));
    expect(listed).toEqual(expect.arrayContaining(idsOf(made.slice(1))));
    expect(listed).not.toContain(made[0]!.id);
    expect(idsOf(await all(client.beta.vaults.list({ limit: 2, include_archived: true })))).toContain(
      made[0]!.id,
    );
  });

  it("display_name is required and bounded; metadata follows the shared rules", async () => {
    await expectApiError(client.beta.vaults.create({ display_name: "" }), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: [/display_name/],
    });
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    await expectApiError(
      client.beta.vaults.create({ display_name: "x", metadata }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [/at most 16 keys/],
      },
    );
  });
});

describe("credentials: create returns only the secret-free projection", () => {
  it("static_bearer, mcp_oauth (with refresh) and environment_variable", async () => {
    const vault = await newVault();
    const bearer = await client.beta.vaults.credentials.create(vault.id, {
      display_name: "Linear",
      metadata: { team: "a" },
      auth: { type: "static_bearer", token: plantedSecret("bearer"), mcp_server_url: MCP_URL },
    });
    expect(bearer).toMatchObject({
      type: "vault_credential",
      vault_id: vault.id,
      display_name: "Linear",
      archived_at: null,
    });
    expect(bearer.id).toMatch(/^vcrd_/);
    expect(bearer.auth).toEqual({ type: "static_bearer", mcp_server_url: MCP_URL });

    const oauth = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: plantedSecret("access"),
        mcp_server_url: "https://other.example.com/mcp",
        expires_at: FUTURE,
        refresh: {
          refresh_token: plantedSecret("refresh"),
          client_id: "client-1",
          token_endpoint: "https://auth.example.com/token",
          token_endpoint_auth: { type: "client_secret_basic", client_secret: plantedSecret("client") },
          scope: "read write",
        },
      },
    });
    expect(oauth.display_name).toBeNull();
    expect(oauth.auth).toEqual({
      type: "mcp_oauth",
      mcp_server_url: "https://other.example.com/mcp",
      expires_at: "2099-01-01T00:00:00.000Z",
      refresh: {
        client_id: "client-1",
        token_endpoint: "https://auth.example.com/token",
        token_endpoint_auth: { type: "client_secret_basic" },
        scope: "read write",
        resource: null,
      },
    });

    const env = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "STRIPE_KEY",
        secret_value: plantedSecret("env"),
        networking: { type: "limited", allowed_hosts: ["api.stripe.com", "*.stripe.com", "192.0.2.1"] },
      },
    });
    expect(env.auth).toEqual({
      type: "environment_variable",
      secret_name: "STRIPE_KEY",
      networking: { type: "limited", allowed_hosts: ["api.stripe.com", "*.stripe.com", "192.0.2.1"] },
      injection_location: { header: true, body: false },
    });

    const retrieved = await client.beta.vaults.credentials.retrieve(oauth.id, { vault_id: vault.id });
    expect(retrieved).toEqual(oauth);
    // Newest first (id order, descending), one per page.
    expect(idsOf(await all(client.beta.vaults.credentials.list(vault.id, { limit: 1 })))).toEqual(
      [env.id, oauth.id, bearer.id].sort().reverse(),
    );
  });

  it("rejects bad shapes with the field named: unknown kind, past expiry, bad host, no injection location", async () => {
    const vault = await newVault();
    const create = (auth: unknown) =>
      client.beta.vaults.credentials.create(vault.id, {
        auth: auth as Anthropic.Beta.Vaults.CredentialCreateParams["auth"],
      });
    const cases: Array<[unknown, RegExp]> = [
      [{ type: "basic", token: "x" }, /auth\.type: unknown auth type "basic"/],
      [
        { type: "static_bearer", token: "x", mcp_server_url: "ftp://x" },
        /auth\.mcp_server_url: expected an absolute http/,
      ],
      [
        { type: "mcp_oauth", access_token: "x", mcp_server_url: MCP_URL, expires_at: "2000-01-01T00:00:00Z" },
        /auth\.expires_at: must be in the future/,
      ],
      [
        {
          type: "environment_variable",
          secret_name: "K",
          secret_value: "v",
          networking: { type: "limited", allowed_hosts: ["https://x.com/path"] },
        },
        /auth\.networking\.allowed_hosts\[0\]: expected a hostname/,
      ],
      [
        {
          type: "environment_variable",
          secret_name: "K",
          secret_value: "v",
          networking: { type: "unrestricted" },
          injection_location: { header: false },
        },
        /auth\.injection_location: at least one of header or body/,
      ],
      [
        {
          type: "environment_variable",
          secret_name: "1BAD",
          secret_value: "v",
          networking: { type: "unrestricted" },
        },
        /auth\.secret_name/,
      ],
    ];
    for (const [auth, message] of cases) {
      await expectApiError(create(auth), Anthropic.BadRequestError, { ...BAD_REQUEST, message: [message] });
    }
    expect(await all(client.beta.vaults.credentials.list(vault.id, { include_archived: true }))).toEqual([]);
  });

  it("one live credential per MCP server URL (or variable name) per vault; archiving frees the slot", async () => {
    const vault = await newVault();
    const first = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: "t1", mcp_server_url: MCP_URL },
    });
    await expectApiError(
      client.beta.vaults.credentials.create(vault.id, {
        auth: { type: "mcp_oauth", access_token: "t2", mcp_server_url: "https://MCP.example.com/mcp/" },
      }),
      Anthropic.ConflictError,
      { ...CONFLICT, message: [new RegExp(first.id)] },
    );
    const otherVault = await newVault("Bob");
    await client.beta.vaults.credentials.create(otherVault.id, {
      auth: { type: "static_bearer", token: "t3", mcp_server_url: MCP_URL },
    });
    await client.beta.vaults.credentials.archive(first.id, { vault_id: vault.id });
    await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: "t4", mcp_server_url: MCP_URL },
    });
  });
});

describe("credentials: rotation is a new revision; type and immutable fields never change", () => {
  it("each secret rotation appends a sealed revision and leaves the earlier ones as they were", async () => {
    const vault = await newVault();
    const tokens = [plantedSecret("r1"), plantedSecret("r2"), plantedSecret("r3")];
    const created = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: tokens[0]!, mcp_server_url: MCP_URL },
    });
    await client.beta.vaults.credentials.update(created.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token: tokens[1]! },
    });
    const rotated = await client.beta.vaults.credentials.update(created.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token: tokens[2]! },
      display_name: "rotated",
    });
    expect(rotated).toMatchObject({ id: created.id, display_name: "rotated", auth: created.auth });

    const revisions = t.revisions(created.id);
    expect(revisions.map((r) => r.revision)).toEqual([1, 2, 3]);
    for (const [i, revision] of revisions.entries()) {
      expect(await t.openRevision(revision)).toEqual({ token: tokens[i] });
    }
    // A name or metadata change is not a rotation: no revision is added.
    await client.beta.vaults.credentials.update(created.id, { vault_id: vault.id, metadata: { a: "b" } });
    expect(t.revisions(created.id)).toHaveLength(3);
  });

  it("a non-secret auth change re-seals the kept secret for the new revision", async () => {
    const vault = await newVault();
    const value = plantedSecret("kept");
    const created = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "API_KEY",
        secret_value: value,
        networking: { type: "unrestricted" },
      },
    });
    const updated = await client.beta.vaults.credentials.update(created.id, {
      vault_id: vault.id,
      auth: {
        type: "environment_variable",
        networking: { type: "limited", allowed_hosts: ["api.example.com"] },
        injection_location: { body: true },
      },
    });
    expect(updated.auth).toEqual({
      type: "environment_variable",
      secret_name: "API_KEY",
      networking: { type: "limited", allowed_hosts: ["api.example.com"] },
      injection_location: { header: true, body: true },
    });
    const [first, second] = t.revisions(created.id);
    expect(second!.sealed.ciphertext.equals(first!.sealed.ciphertext)).toBe(false);
    expect(await t.openRevision(second!)).toEqual({ secret_value: value });
  });

  it("mcp_oauth: rotating the access token keeps the refresh token; scope '' clears; refresh null removes", async () => {
    const vault = await newVault();
    const created = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: "at-1",
        mcp_server_url: MCP_URL,
        expires_at: FUTURE,
        refresh: {
          refresh_token: "rt-1",
          client_id: "c",
          token_endpoint: "https://auth.example.com/token",
          token_endpoint_auth: { type: "client_secret_post", client_secret: "cs-1" },
          scope: "s",
        },
      },
    });
    const update = (auth: Anthropic.Beta.Vaults.BetaManagedAgentsMCPOAuthUpdateParams) =>
      client.beta.vaults.credentials.update(created.id, { vault_id: vault.id, auth });
    const rotated = await update({ type: "mcp_oauth", access_token: "at-2", refresh: { scope: "" } });
    expect(rotated.auth).toMatchObject({ expires_at: "2099-01-01T00:00:00.000Z", refresh: { scope: null } });
    expect(await t.openRevision(t.revisions(created.id)[1]!)).toEqual({
      access_token: "at-2",
      refresh_token: "rt-1",
      client_secret: "cs-1",
    });
    await update({
      type: "mcp_oauth",
      refresh: { token_endpoint_auth: { type: "client_secret_post", client_secret: "cs-2" } },
    });
    expect((await t.openRevision(t.revisions(created.id)[2]!)).client_secret).toBe("cs-2");
    const removed = await update({ type: "mcp_oauth", refresh: null });
    expect(removed.auth).toMatchObject({ refresh: null });
    expect(await t.openRevision(t.revisions(created.id)[3]!)).toEqual({ access_token: "at-2" });
    const validation = await client.beta.vaults.credentials.mcpOAuthValidate(created.id, {
      vault_id: vault.id,
    });
    expect(validation.has_refresh_token).toBe(false);
  });

  it("a type change or an immutable field is a 400 naming the field, and changes nothing", async () => {
    const vault = await newVault();
    const bearer = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: "t", mcp_server_url: MCP_URL },
    });
    const env = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "K",
        secret_value: "v",
        networking: { type: "unrestricted" },
      },
    });
    const oauth = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: "a",
        mcp_server_url: "https://o.example.com/mcp",
        refresh: {
          refresh_token: "r",
          client_id: "c",
          token_endpoint: "https://a.example.com/t",
          token_endpoint_auth: { type: "none" },
        },
      },
    });
    const noRefresh = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "mcp_oauth", access_token: "a", mcp_server_url: "https://n.example.com/mcp" },
    });
    const cases: Array<[string, unknown, RegExp]> = [
      [
        bearer.id,
        { type: "mcp_oauth", access_token: "x" },
        /^auth\.type: a credential's type cannot change \(this one is static_bearer\)/,
      ],
      [
        bearer.id,
        { type: "static_bearer", mcp_server_url: "https://elsewhere.example.com" },
        /^auth\.mcp_server_url: cannot change/,
      ],
      [env.id, { type: "environment_variable", secret_name: "OTHER" }, /^auth\.secret_name: cannot change/],
      [
        oauth.id,
        { type: "mcp_oauth", refresh: { client_id: "d" } },
        /^auth\.refresh\.client_id: cannot change/,
      ],
      [
        oauth.id,
        {
          type: "mcp_oauth",
          refresh: { token_endpoint_auth: { type: "client_secret_basic", client_secret: "s" } },
        },
        /^auth\.refresh\.token_endpoint_auth\.type: cannot change/,
      ],
      [
        noRefresh.id,
        { type: "mcp_oauth", refresh: { refresh_token: "r" } },
        /^auth\.refresh: this credential was created without a refresh/,
      ],
    ];
    for (const [id, auth, message] of cases) {
      const before = t.revisions(id).length;
      await expectApiError(
        client.beta.vaults.credentials.update(id, {
          vault_id: vault.id,
          auth: auth as Anthropic.Beta.Vaults.CredentialUpdateParams["auth"],
        }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [message] },
      );
      expect(t.revisions(id)).toHaveLength(before);
    }
    // Repeating an immutable field's stored value is not a change.
    await client.beta.vaults.credentials.update(bearer.id, {
      vault_id: vault.id,
      auth: {
        type: "static_bearer",
        mcp_server_url: MCP_URL,
      } as Anthropic.Beta.Vaults.CredentialUpdateParams["auth"],
    });
  });
});

describe("credentials: archive, delete, validate", () => {
  it("archive hides from the list, refuses updates; delete erases every sealed revision", async () => {
    const vault = await newVault();
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: "t", mcp_server_url: MCP_URL },
    });
    await client.beta.vaults.credentials.update(credential.id, {
      vault_id: vault.id,
      auth: { type: "static_bearer", token: "t2" },
    });
    const archived = await client.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });
    expect(archived.archived_at).toMatch(RFC3339);
    expect(await all(client.beta.vaults.credentials.list(vault.id))).toEqual([]);
    expect(
      idsOf(await all(client.beta.vaults.credentials.list(vault.id, { include_archived: true }))),
    ).toEqual([credential.id]);
    await expectApiError(
      client.beta.vaults.credentials.update(credential.id, { vault_id: vault.id, display_name: "x" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/archived/] },
    );

    expect(await client.beta.vaults.credentials.delete(credential.id, { vault_id: vault.id })).toEqual({
      id: credential.id,
      type: "vault_credential_deleted",
    });
    expect(t.revisions(credential.id)).toEqual([]);
    await expectApiError(
      client.beta.vaults.credentials.retrieve(credential.id, { vault_id: vault.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
  });

  it("a credential is only reachable through its own vault; deleting a vault deletes its credentials", async () => {
    const vault = await newVault();
    const other = await newVault("other");
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: "t", mcp_server_url: MCP_URL },
    });
    await expectApiError(
      client.beta.vaults.credentials.retrieve(credential.id, { vault_id: other.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await client.beta.vaults.archive(vault.id);
    await expectApiError(
      client.beta.vaults.credentials.create(vault.id, {
        auth: { type: "static_bearer", token: "t", mcp_server_url: "https://x.example.com" },
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/vault .* is archived/] },
    );
    await client.beta.vaults.delete(vault.id);
    expect(t.revisions(credential.id)).toEqual([]);
    await expectApiError(
      client.beta.vaults.credentials.retrieve(credential.id, { vault_id: vault.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
  });

  it("mcp_oauth_validate probes the server: one that cannot be reached is unknown, failed at initialize with no answer", async () => {
    const vault = await newVault();
    const oauth = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: "a",
        mcp_server_url: MCP_URL,
        refresh: {
          refresh_token: "r",
          client_id: "c",
          token_endpoint: "https://a.example.com/t",
          token_endpoint_auth: { type: "none" },
        },
      },
    });
    const validation = await client.beta.vaults.credentials.mcpOAuthValidate(oauth.id, {
      vault_id: vault.id,
    });
    expect(validation).toEqual({
      type: "vault_credential_validation",
      credential_id: oauth.id,
      vault_id: vault.id,
      status: "unknown",
      has_refresh_token: true,
      // mcp.example.com does not resolve here: the live probe (test/e2e/credentialValidation.test.ts)
      // got no HTTP answer, so nothing is claimed and no refresh was tried.
      mcp_probe: { method: "initialize", http_response: null },
      refresh: null,
      validated_at: expect.stringMatching(RFC3339),
    });
    const env = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "K",
        secret_value: "v",
        networking: { type: "unrestricted" },
      },
    });
    await expectApiError(
      client.beta.vaults.credentials.mcpOAuthValidate(env.id, { vault_id: vault.id }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
  });
});
