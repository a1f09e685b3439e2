/**
 * MCP tunnels and their CA certificates through the official SDK over real HTTP, on SQLite and on
 * PostgreSQL: all ten operations (create, retrieve, list, archive, reveal and rotate the token;
 * add, retrieve, list and archive a certificate), the token answered only by reveal and rotate,
 * the admin audit of each change (never the token), admin-only access, and a clear 4xx for every
 * bad input with nothing written.
 */
import { request } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import type {
  BetaTunnel,
  BetaTunnelCertificate,
  BetaTunnelToken,
} from "@anthropic-ai/sdk/resources/beta/tunnels/index";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, BAD_REQUEST, expectApiError, NOT_FOUND, RFC3339, rawRequest } from "../support/sdkHelpers.js";
import { createTestCa } from "../support/testCa.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
const DOMAIN = /^[0-9a-z]{26}\.tunnels\.awaken\.invalid$/;

describe.each(BACKENDS)("MCP tunnels over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer(schema ? { databaseUrl: schema.url } : {});
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  const audit = async (resourceId: string) => {
    const response = await rawRequest(t!, "GET", `/v1/awaken/audit?resource_id=${resourceId}&limit=100`);
    expect(response.status).toBe(200);
    return response.body as { data: Array<{ action: string; resource_type: string }> };
  };

  it("tunnels: create, retrieve, list (archived hidden unless asked), reveal, rotate, archive", async () => {
    const tunnel: BetaTunnel = await client.beta.tunnels.create({ display_name: "Internal MCP servers" });
    expect(tunnel).toEqual({
      id: expect.stringMatching(/^tnl_/),
      type: "tunnel",
      display_name: "Internal MCP servers",
      domain: expect.stringMatching(DOMAIN),
      created_at: expect.stringMatching(RFC3339),
      archived_at: null,
    });
    // No token in a tunnel's projection, ever.
    expect(JSON.stringify(tunnel)).not.toMatch(/token/);
    const bare = await client.beta.tunnels.create({});
    expect(bare.display_name).toBeNull();
    expect(bare.domain).not.toBe(tunnel.domain);
    expect(await client.beta.tunnels.retrieve(tunnel.id)).toEqual(tunnel);

    const revealed: BetaTunnelToken = await client.beta.tunnels.revealToken(tunnel.id);
    expect(revealed).toEqual({
      id: expect.stringMatching(/^tnltok_/),
      type: "tunnel_token",
      tunnel_token: expect.stringMatching(/^awaken-tunnel-[A-Za-z0-9_-]{43}$/),
    });
    // The same value until rotated.
    expect(await client.beta.tunnels.revealToken(tunnel.id)).toEqual(revealed);
    expect((await client.beta.tunnels.revealToken(bare.id)).tunnel_token).not.toBe(revealed.tunnel_token);

    const rotated = await client.beta.tunnels.rotateToken(tunnel.id, { reason: "scheduled" });
    expect(rotated.id).not.toBe(revealed.id);
    expect(rotated.tunnel_token).not.toBe(revealed.tunnel_token);
    expect(await client.beta.tunnels.revealToken(tunnel.id)).toEqual(rotated);
    expect((await client.beta.tunnels.rotateToken(tunnel.id, {})).id).not.toBe(rotated.id);

    const listed = await all(client.beta.tunnels.list({ limit: 1 }));
    expect(listed.map((x) => x.id)).toEqual([bare.id, tunnel.id]);

    const archived = await client.beta.tunnels.archive(tunnel.id);
    expect(archived).toEqual({ ...tunnel, archived_at: expect.stringMatching(RFC3339) });
    // Retrying answers the record unchanged (SDK).
    expect(await client.beta.tunnels.archive(tunnel.id)).toEqual(archived);
    expect((await all(client.beta.tunnels.list())).map((x) => x.id)).toEqual([bare.id]);
    expect((await all(client.beta.tunnels.list({ include_archived: true }))).map((x) => x.id)).toEqual([
      bare.id,
      tunnel.id,
    ]);
    // An archived tunnel's token is gone: neither revealed nor rotated.
    await expectApiError(client.beta.tunnels.revealToken(tunnel.id), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: [/archived/],
    });
    await expectApiError(
      client.beta.tunnels.rotateToken(tunnel.id, {}),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );

    // Every change audited, newest first; the token is nowhere in the audit.
    const entries = await audit(tunnel.id);
    expect(entries.data.map((e) => e.action)).toEqual([
      "archive",
      "rotate",
      "reveal",
      "rotate",
      "reveal",
      "reveal",
      "create",
    ]);
    expect(JSON.stringify(entries)).not.toContain(revealed.tunnel_token);
    expect(JSON.stringify(entries)).not.toContain(rotated.tunnel_token);
    await client.beta.tunnels.archive(bare.id);
  });

  it("certificates: add (fingerprint, expiry), retrieve, list, at most two live, archive; the tunnel's archive takes them", async () => {
    const tunnel = await client.beta.tunnels.create({ display_name: "certs" });
    const ca = await createTestCa();
    const certificate: BetaTunnelCertificate = await client.beta.tunnels.certificates.create(tunnel.id, {
      ca_certificate_pem: ca.pem,
    });
    expect(certificate).toEqual({
      id: expect.stringMatching(/^tcrt_/),
      type: "tunnel_certificate",
      tunnel_id: tunnel.id,
      fingerprint: ca.fingerprint,
      expires_at: new Date(Math.floor(ca.notAfter.getTime() / 1000) * 1000).toISOString(),
      created_at: expect.stringMatching(RFC3339),
      archived_at: null,
    });
    expect(await client.beta.tunnels.certificates.retrieve(certificate.id, { tunnel_id: tunnel.id })).toEqual(
      certificate,
    );
    const second = await client.beta.tunnels.certificates.create(tunnel.id, {
      ca_certificate_pem: (await createTestCa({ name: "second" })).pem,
    });
    // A third while two are live: refused, nothing written.
    const third = (await createTestCa({ name: "third" })).pem;
    await expectApiError(
      client.beta.tunnels.certificates.create(tunnel.id, { ca_certificate_pem: third }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/2 certificates/, /archive one first/] },
    );
    expect((await all(client.beta.tunnels.certificates.list(tunnel.id))).map((c) => c.id)).toEqual([
      second.id,
      certificate.id,
    ]);

    const archived = await client.beta.tunnels.certificates.archive(certificate.id, { tunnel_id: tunnel.id });
    expect(archived).toEqual({ ...certificate, archived_at: expect.stringMatching(RFC3339) });
    expect(await client.beta.tunnels.certificates.archive(certificate.id, { tunnel_id: tunnel.id })).toEqual(
      archived,
    );
    expect((await all(client.beta.tunnels.certificates.list(tunnel.id))).map((c) => c.id)).toEqual([
      second.id,
    ]);
    expect(
      (await all(client.beta.tunnels.certificates.list(tunnel.id, { include_archived: true, limit: 1 }))).map(
        (c) => c.id,
      ),
    ).toEqual([second.id, certificate.id]);
    // Room again for one.
    const replaced = await client.beta.tunnels.certificates.create(tunnel.id, { ca_certificate_pem: third });

    // Archiving the tunnel archives every live certificate in the same operation (SDK).
    await client.beta.tunnels.archive(tunnel.id);
    const after = await all(client.beta.tunnels.certificates.list(tunnel.id, { include_archived: true }));
    expect(after.every((c) => c.archived_at !== null)).toBe(true);
    expect(after.map((c) => c.id)).toContain(replaced.id);
    await expectApiError(
      client.beta.tunnels.certificates.create(tunnel.id, { ca_certificate_pem: ca.pem }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/archived/] },
    );
    const entries = await audit(replaced.id);
    expect(entries.data.map((e) => [e.action, e.resource_type])).toEqual([["create", "tunnel_certificate"]]);
  });

  it("bad inputs: a clear 4xx each, nothing written", async () => {
    const tunnel = await client.beta.tunnels.create({ display_name: "inputs" });
    const before = await all(client.beta.tunnels.list({ include_archived: true }));
    const auditBefore = await audit(tunnel.id);

    for (const display_name of ["", "x".repeat(256), "tab\there", 7 as never]) {
      await expectApiError(client.beta.tunnels.create({ display_name }), Anthropic.BadRequestError, {
        ...BAD_REQUEST,
        message: [/display_name/],
      });
    }
    await expectApiError(
      client.beta.tunnels.create({ display_name: "x", domain: "mine.example" } as never),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.tunnels.rotateToken(tunnel.id, { reason: "r".repeat(1025) }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/reason/] },
    );
    await expectApiError(client.beta.tunnels.list({ limit: 0 }), Anthropic.BadRequestError, BAD_REQUEST);
    await expectApiError(client.beta.tunnels.retrieve("tnl_nope"), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.beta.tunnels.archive("tnl_nope"), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.beta.tunnels.revealToken("tnl_nope"), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.beta.tunnels.rotateToken("tnl_nope", {}), Anthropic.NotFoundError, NOT_FOUND);

    const ca = await createTestCa();
    const leaf = await createTestCa({ isCa: false, name: "not a CA" });
    const expired = await createTestCa({
      notBefore: new Date(Date.now() - 10 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    });
    const bad: Array<[string, RegExp]> = [
      ["", /ca_certificate_pem/],
      ["not a certificate", /exactly one PEM CERTIFICATE/],
      [`${ca.pem}\n${(await createTestCa()).pem}`, /exactly one/],
      [`${ca.pem}\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`, /private-key/],
      ["-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n", /not a valid X.509/],
      [leaf.pem, /not a CA certificate/],
      [expired.pem, /expired/],
      [`${ca.pem}${" ".repeat(8 * 1024)}`, /8192/],
    ];
    for (const [pem, message] of bad) {
      await expectApiError(
        client.beta.tunnels.certificates.create(tunnel.id, { ca_certificate_pem: pem }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [message] },
      );
    }
    await expectApiError(
      client.beta.tunnels.certificates.create("tnl_nope", { ca_certificate_pem: ca.pem }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.tunnels.certificates.retrieve("tcrt_nope", { tunnel_id: tunnel.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.tunnels.certificates.archive("tcrt_nope", { tunnel_id: tunnel.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.tunnels.certificates.list("tnl_nope"),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );

    expect(await all(client.beta.tunnels.list({ include_archived: true }))).toEqual(before);
    expect(await all(client.beta.tunnels.certificates.list(tunnel.id, { include_archived: true }))).toEqual(
      [],
    );
    expect(await audit(tunnel.id)).toEqual(auditBefore);
    await client.beta.tunnels.archive(tunnel.id);
  });

  it("the connector's door: the current token is accepted; a rotated-away one at once, an archived tunnel's and a made-up one are refused", async () => {
    const tunnel = await client.beta.tunnels.create({});
    const first = await client.beta.tunnels.revealToken(tunnel.id);
    expect(await upgradeStatus(first.tunnel_token)).toBe(101);
    const second = await client.beta.tunnels.rotateToken(tunnel.id, {});
    expect(await upgradeStatus(first.tunnel_token)).toBe(401);
    expect(await upgradeStatus(second.tunnel_token)).toBe(101);
    expect(await upgradeStatus(`awaken-tunnel-${"A".repeat(43)}`)).toBe(401);
    expect(await upgradeStatus("")).toBe(401);
    await client.beta.tunnels.archive(tunnel.id);
    expect(await upgradeStatus(second.tunnel_token)).toBe(401);
  });

  /** The status a connector's upgrade request with `token` gets (the socket is closed at once). */
  function upgradeStatus(token: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(`${t!.server.url}/v1/tunnels/connect`, {
        headers: { Connection: "Upgrade", Upgrade: "awaken-tunnel/1", Authorization: `Bearer ${token}` },
      });
      req.on("upgrade", (response, socket) => {
        socket.destroy();
        resolve(response.statusCode ?? 0);
      });
      req.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
  }

  it("admin only: a builder key is refused every operation", async () => {
    const minted = await rawRequest(t!, "POST", "/v1/awaken/api_keys", {
      body: JSON.stringify({ role: "builder", label: "tunnels" }),
    });
    expect(minted.status).toBe(200);
    const builder = new Anthropic({
      apiKey: (minted.body as { key: string }).key,
      baseURL: t!.server.url,
      maxRetries: 0,
    });
    const tunnel = await client.beta.tunnels.create({});
    const calls: Array<() => Promise<unknown>> = [
      () => builder.beta.tunnels.create({}),
      () => builder.beta.tunnels.list(),
      () => builder.beta.tunnels.retrieve(tunnel.id),
      () => builder.beta.tunnels.revealToken(tunnel.id),
      () => builder.beta.tunnels.rotateToken(tunnel.id, {}),
      () => builder.beta.tunnels.archive(tunnel.id),
      () => builder.beta.tunnels.certificates.list(tunnel.id),
    ];
    for (const call of calls) {
      await expectApiError(call(), Anthropic.PermissionDeniedError, {
        status: 403,
        type: "permission_error",
      });
    }
    expect((await client.beta.tunnels.retrieve(tunnel.id)).archived_at).toBeNull();
    await client.beta.tunnels.archive(tunnel.id);
  });
});
