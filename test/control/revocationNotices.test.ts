/**
 * Two IamServices on one store stand for two replicas, joined by a revocation channel as PostgreSQL's
 * NOTIFY joins them: a key revoked on one is refused by the other at once (its cached answer and its
 * tokens' minter dropped), not when the cache expires; a row read while a revocation was heard is not
 * kept; a channel that may have missed notices empties the caches.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID, IamService, type Principal } from "../../src/control/iamService.js";
import type { ApiKeyRecord, RevocationNotices } from "../../src/control/ports.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlIamStore } from "../../src/stores/sql/sqlIamStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { ManualClock } from "../support/storeFixtures.js";

/** One in-memory channel every "replica" of a test hears (this process included, as on PostgreSQL). */
class Channel implements RevocationNotices {
  private readonly listeners = new Set<(keyId: string | null) => void>();
  readonly sent: string[] = [];
  async keyRevoked(keyId: string): Promise<void> {
    this.sent.push(keyId);
    this.missed(keyId);
  }
  onKeyRevoked(listener: (keyId: string | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  missed(keyId: string | null = null): void {
    for (const listener of this.listeners) listener(keyId);
  }
}

/** A store whose key lookups can be held after they read their row, to race a revocation. */
class HeldIamStore extends SqlIamStore {
  hold: Promise<void> | null = null;
  override async findApiKeyByHashes(keyHashes: readonly string[]): Promise<ApiKeyRecord | null> {
    const record = await super.findApiKeyByHashes(keyHashes);
    await this.hold;
    return record;
  }
}

const ADMIN: Principal = {
  workspaceId: DEFAULT_WORKSPACE_ID,
  apiKeyId: "key_admin",
  role: "admin",
  scope: { agentIds: null, sessionId: null, sessionNamespace: null, operations: null },
};
const BY = { workspaceId: DEFAULT_WORKSPACE_ID, actor: "key_admin" };
const TOKEN_KEY = Buffer.alloc(32, 7);

let close: () => Promise<void>;
let store: HeldIamStore;
const clock = new ManualClock();
const channel = new Channel();
const replica = (notices: RevocationNotices | null = channel) =>
  new IamService(store, clock, 30_000, TOKEN_KEY, undefined, notices);

beforeEach(async () => {
  const handle = await openSqlite(":memory:");
  close = () => handle.close();
  store = new HeldIamStore(handle.db as Db);
  await store.ensureWorkspace({
    id: DEFAULT_WORKSPACE_ID,
    name: "d",
    createdAt: 1,
    audit: testAudit("workspace"),
  });
});
afterEach(async () => {
  channel.sent.length = 0;
  await close();
});

async function runtimeKey(on: IamService) {
  return on.createApiKey(ADMIN, { role: "runtime", label: null, workspaceId: null, agentIds: null });
}

describe("revocation notices", () => {
  it("a key revoked on one replica is refused by another at once, and so are the tokens it minted", async () => {
    const a = replica();
    const b = replica();
    const { record, key } = await runtimeKey(a);
    const principal = await b.authenticate(key);
    expect(principal).toMatchObject({ apiKeyId: record.id });
    const { token } = await a.mintAccessToken(principal!, {
      operations: ["read"],
      agentIds: null,
      sessionId: null,
      ttlSeconds: 600,
    });
    expect(await b.authenticate(token)).toMatchObject({ apiKeyId: record.id, role: "runtime" });

    await a.revokeApiKey(BY, record.id);
    expect(channel.sent).toEqual([record.id]);
    expect(await b.authenticate(key)).toBeNull();
    expect(await b.authenticate(token)).toBeNull();
  });

  it("without the channel, another replica keeps the cached answer until it expires", async () => {
    const a = replica(null);
    const b = replica(null);
    const { record, key } = await runtimeKey(a);
    expect(await b.authenticate(key)).toMatchObject({ apiKeyId: record.id });
    await a.revokeApiKey(BY, record.id);
    expect(await b.authenticate(key)).toMatchObject({ apiKeyId: record.id });
    clock.advance(30_000);
    expect(await b.authenticate(key)).toBeNull();
  });

  it("a row read while a revocation was heard is not kept: the next request reads it again", async () => {
    const a = replica();
    const b = replica();
    const { record, key } = await runtimeKey(a);
    let release = () => {};
    store.hold = new Promise((resolve) => {
      release = resolve;
    });
    // B reads the row before the revocation commits and answers after it was heard.
    const racing = b.authenticate(key);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await a.revokeApiKey(BY, record.id);
    release();
    expect(await racing).toMatchObject({ apiKeyId: record.id });
    expect(await b.authenticate(key)).toBeNull();
  });

  it("a channel that may have missed notices empties every cached answer", async () => {
    const a = replica(null);
    const b = replica();
    const { record, key } = await runtimeKey(a);
    expect(await b.authenticate(key)).toMatchObject({ apiKeyId: record.id });
    // Revoked where no notice reaches B, then B's channel reconnects.
    await a.revokeApiKey(BY, record.id);
    expect(await b.authenticate(key)).toMatchObject({ apiKeyId: record.id });
    channel.missed();
    expect(await b.authenticate(key)).toBeNull();
  });
});
