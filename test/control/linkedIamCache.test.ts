/**
 * A split Coordinator's authentication cache over Control's IAM (a real IamService on SQLite,
 * counted where the link would cross): an API key's answer is asked once per cache period, a
 * refusal too; an access token is asked every time (its expiry is Control's to check); a
 * revocation made through this coordinator ends the key here at once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { IamService, type Principal } from "../../src/control/iamService.js";
import { cachedIam } from "../../src/control/linkedIamCache.js";
import type { IamPort } from "../../src/edge/http/edgeServices.js";
import { SqlIamStore } from "../../src/stores/sql/sqlIamStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { ManualClock } from "../support/storeFixtures.js";

const CACHE_MS = 5_000;
const ADMIN: Principal = {
  workspaceId: "wrkspc_default",
  apiKeyId: "key_admin",
  role: "admin",
  scope: { agentIds: null, sessionId: null, sessionNamespace: null, operations: null },
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function setUp() {
  const handle = await openSqlite(":memory:");
  closers.push(() => handle.close());
  const clock = new ManualClock();
  const control = new IamService(new SqlIamStore(handle.db), clock, 0, Buffer.alloc(32, 7));
  const asked: string[] = [];
  // What crosses the link: every call reaching Control is recorded.
  const link: IamPort = {
    authenticate: (key) => {
      asked.push(key);
      return control.authenticate(key);
    },
    createApiKey: (by, request) => control.createApiKey(by, request),
    listApiKeys: (workspaceId, page) => control.listApiKeys(workspaceId, page),
    revokeApiKey: (by, id) => control.revokeApiKey(by, id),
    mintAccessToken: (by, request) => control.mintAccessToken(by, request),
  };
  return { clock, asked, iam: cachedIam(link, clock, CACHE_MS) };
}

describe("a split coordinator's authentication cache", () => {
  it("asks Control once per cache period for an API key, and once for a refusal", async () => {
    const { clock, asked, iam } = await setUp();
    const { record, key } = await iam.createApiKey(ADMIN, {
      role: "runtime",
      label: null,
      workspaceId: null,
      agentIds: null,
    });
    for (let i = 0; i < 3; i++) expect(await iam.authenticate(key)).toMatchObject({ apiKeyId: record.id });
    for (let i = 0; i < 3; i++) expect(await iam.authenticate("sk-awaken-nobody")).toBeNull();
    expect(asked).toEqual([key, "sk-awaken-nobody"]);
    clock.advance(CACHE_MS);
    expect(await iam.authenticate(key)).toMatchObject({ apiKeyId: record.id });
    expect(asked).toEqual([key, "sk-awaken-nobody", key]);
  });

  it("ends a key revoked through it at once", async () => {
    const { asked, iam } = await setUp();
    const { record, key } = await iam.createApiKey(ADMIN, {
      role: "runtime",
      label: null,
      workspaceId: null,
      agentIds: null,
    });
    expect(await iam.authenticate(key)).not.toBeNull();
    await iam.revokeApiKey({ workspaceId: ADMIN.workspaceId, actor: ADMIN.apiKeyId }, record.id);
    expect(await iam.authenticate(key)).toBeNull();
    expect(asked).toEqual([key, key]);
  });

  it("asks Control about an access token every time: it expires there", async () => {
    const { clock, asked, iam } = await setUp();
    const { key } = await iam.createApiKey(ADMIN, {
      role: "runtime",
      label: null,
      workspaceId: null,
      agentIds: null,
    });
    const runtime = await iam.authenticate(key);
    const { token } = await iam.mintAccessToken(runtime!, {
      operations: ["read"],
      agentIds: null,
      sessionId: null,
      ttlSeconds: 60,
    });
    expect(await iam.authenticate(token)).toMatchObject({ accessTokenId: expect.any(String) });
    clock.advance(61_000);
    expect(await iam.authenticate(token)).toBeNull();
    expect(asked).toEqual([key, token, token]);
  });
});
