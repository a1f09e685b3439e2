import { createHash } from "node:crypto";
import { strToU8 } from "fflate";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AwakenError } from "../../src/kernel/errors.js";
import type { OutboundConnector } from "../../src/kernel/outboundConnector.js";
import type { BlobStore } from "../../src/resources/ports.js";
import { SkillService } from "../../src/resources/skills/skillService.js";
import type { Db, SqlDialect } from "../../src/stores/sql/db.js";
import { SqlBlobStore } from "../../src/stores/sql/sqlBlobStore.js";
import { SqlSkillStore } from "../../src/stores/sql/sqlSkillStore.js";
import { resourceStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import { ManualClock } from "../support/storeFixtures.js";

// The skill store and service on every backend (SQLite and the real PostgreSQL server), with the
// real blob store on the same database: versions, latest, deletes, the run reader, concurrency.

interface Fixture {
  service: SkillService;
  store: SqlSkillStore;
  /** The same tables through another pool (a second replica on PostgreSQL). */
  other: SqlSkillStore;
  blobs: BlobStore;
  clock: ManualClock;
  close(): Promise<void>;
}

function fixture(db: Db, otherDb: Db, dialect: SqlDialect, close: () => Promise<void>): Fixture {
  const stores = resourceStores(db, dialect);
  const store = stores.skills as SqlSkillStore;
  const blobs = new SqlBlobStore(db);
  const clock = new ManualClock();
  const service = new SkillService({
    stores,
    blobs,
    clock,
    env: {},
    outbound: undefined as unknown as OutboundConnector,
  });
  return { service, store, other: new SqlSkillStore(otherDb, dialect), blobs, clock, close };
}

const BACKENDS: Record<string, { unavailable: () => string | null; open: () => Promise<Fixture> }> = {
  SQLite: {
    unavailable: () => null,
    open: async () => {
      const handle = await openSqlite(":memory:");
      return fixture(handle.db, handle.db, "sqlite", () => handle.close());
    },
  },
  PostgreSQL: {
    unavailable: postgresUnavailable,
    open: async () => {
      const pg = await openTestPostgres();
      const replica = await pg.openReplica();
      return fixture(pg.handle.db, replica.db, "postgres", () => pg.dispose());
    },
  },
};

const WS = "wrkspc_a";
const md = (description: string) => `---\nname: notes\ndescription: ${description}\n---\nBody\n`;
const upload = (description: string, extra: Record<string, string> = {}) =>
  Object.entries({ "SKILL.md": md(description), ...extra }).map(([path, text]) => ({
    path: `notes/${path}`,
    bytes: strToU8(text),
  }));
const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

async function code(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AwakenError);
  return (error as AwakenError).code;
}

for (const [name, backend] of Object.entries(BACKENDS)) {
  describe.skipIf(backend.unavailable() !== null)(`skill store and service on ${name}`, () => {
    let f: Fixture;
    beforeEach(async () => {
      f = await backend.open();
    });
    afterEach(async () => {
      await f.close();
    });

    it("stores each version's files as blobs, read back by the run reader with their digests", async () => {
      const { skill, version } = await f.service.create(WS, {
        files: upload("v1", { "bin/run.sh": "echo hi\n" }),
      });
      expect(skill).toMatchObject({ name: "notes", displayName: "notes", latestVersionId: version.id });
      const run = await f.service.versionForRun(WS, skill.id, version.id);
      expect(run).toEqual({
        skillId: skill.id,
        version: version.id,
        name: "notes",
        description: "v1",
        files: [
          { path: "SKILL.md", digest: sha(md("v1")), sizeBytes: md("v1").length },
          { path: "bin/run.sh", digest: sha("echo hi\n"), sizeBytes: 8 },
        ],
      });
      for (const file of run!.files) expect(await f.blobs.has(file.digest)).toBe(true);
      // Another workspace, another skill's id, an unknown version: nothing.
      expect(await f.service.versionForRun("wrkspc_b", skill.id, version.id)).toBeNull();
      expect(await f.service.versionForRun(WS, skill.id, "skillver_nope")).toBeNull();
    });

    it("the content digest is the same for the same files, and differs when one changes", async () => {
      const { skill, version } = await f.service.create(WS, { files: upload("v1") });
      f.clock.advance(1);
      const same = await f.service.createVersion(WS, skill.id, [...upload("v1")].reverse());
      f.clock.advance(1);
      const changed = await f.service.createVersion(WS, skill.id, upload("v2"));
      expect(same.contentDigest).toBe(version.contentDigest);
      expect(changed.contentDigest).not.toBe(version.contentDigest);
      expect(version.contentDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    it("latest moves on create and back on delete; the only version cannot be deleted; deleting the skill takes all", async () => {
      const { skill, version: v1 } = await f.service.create(WS, { files: upload("v1") });
      f.clock.advance(1);
      const v2 = await f.service.createVersion(WS, skill.id, upload("v2"));
      f.clock.advance(1);
      const v3 = await f.service.createVersion(WS, skill.id, upload("v3"));
      expect((await f.service.retrieve(WS, skill.id)).latestVersionId).toBe(v3.id);
      expect(await f.service.resolveVersion(WS, skill.id, null)).toBe(v3.id);
      expect(await f.service.resolveVersion(WS, skill.id, "latest")).toBe(v3.id);
      expect(await f.service.resolveVersion(WS, skill.id, v1.id)).toBe(v1.id);

      const page = await f.store.listVersions(WS, skill.id, { limit: 2, cursor: null });
      expect(page.data.map((v) => v.id)).toEqual([v3.id, v2.id]);
      const rest = await f.store.listVersions(WS, skill.id, { limit: 2, cursor: page.nextCursor });
      expect(rest.data.map((v) => v.id)).toEqual([v1.id]);
      expect(rest.nextCursor).toBeNull();

      await f.service.deleteVersion(WS, skill.id, v3.id);
      expect((await f.service.retrieve(WS, skill.id)).latestVersionId).toBe(v2.id);
      await f.service.deleteVersion(WS, skill.id, v1.id);
      expect(await f.store.deleteVersion(WS, skill.id, v2.id, 0)).toEqual({ outcome: "last" });
      expect(await f.store.deleteVersion(WS, skill.id, v3.id, 0)).toEqual({ outcome: "absent" });
      expect(await code(f.service.deleteVersion(WS, skill.id, v2.id))).toBe("invalid_request");

      expect(await f.store.deleteSkill("wrkspc_b", skill.id)).toBeNull();
      await f.service.delete(WS, skill.id);
      expect(await f.store.getSkill(WS, skill.id)).toBeNull();
      expect(await f.store.getVersion(WS, skill.id, v2.id)).toBeNull();
      expect(await code(f.service.delete(WS, skill.id))).toBe("not_found");
    });

    it("another workspace sees nothing and pins nothing", async () => {
      const { skill, version } = await f.service.create(WS, { files: upload("v1") });
      expect(await code(f.service.retrieve("wrkspc_b", skill.id))).toBe("not_found");
      expect(await code(f.service.retrieveVersion("wrkspc_b", skill.id, version.id))).toBe("not_found");
      expect(await code(f.service.createVersion("wrkspc_b", skill.id, upload("x")))).toBe("not_found");
      expect(await code(f.service.resolveVersion("wrkspc_b", skill.id, null))).toBe("invalid_request");
      expect((await f.service.list("wrkspc_b", { limit: 10, cursor: null, source: null })).data).toEqual([]);
      expect((await f.service.list(WS, { limit: 10, cursor: null, source: "anthropic" })).data).toEqual([]);
      expect((await f.service.list(WS, { limit: 10, cursor: null, source: "custom" })).data).toHaveLength(1);
    });

    it("versions added at once from two connections all land, and latest is the newest", async () => {
      const { skill } = await f.service.create(WS, { files: upload("v0") });
      const stores = [f.store, f.other];
      const versions = Array.from({ length: 8 }, (_, i) => ({
        id: `skillver_zzzz${String(i).padStart(2, "0")}`,
        skillId: skill.id,
        workspaceId: WS,
        name: "notes",
        description: `v${i}`,
        contentDigest: sha(String(i)),
        files: [],
        createdAt: i,
      }));
      const added = await Promise.all(versions.map((v, i) => stores[i % 2]!.addVersion(v, i)));
      expect(added.every(Boolean)).toBe(true);
      const all = await f.store.listVersions(WS, skill.id, { limit: 100, cursor: null });
      expect(all.data).toHaveLength(9);
      expect(all.data[0]!.id).toBe("skillver_zzzz07");
      expect((await f.store.getSkill(WS, skill.id))!.latestVersionId).toBe("skillver_zzzz07");
    });
  });
}
