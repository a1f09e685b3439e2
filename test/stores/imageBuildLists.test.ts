/**
 * A workspace's list of image builds on a SQLite file and on PostgreSQL: a build shared by identical
 * inputs across workspaces is listed to each workspace with its own environments only (never the
 * other's ids), a workspace without a link sees nothing, links of deleted environments drop out,
 * pages walk newest first without gaps, and a forged cursor is a client error.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { imageBuildKey } from "../../src/kernel/imageBuild.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

interface Backend {
  db: Db;
  store: SqlImageBuildStore;
  close(): Promise<void>;
}

const BACKENDS = {
  "SQLite file": async (): Promise<Backend> => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-imagebuildlists-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    return {
      db: handle.db,
      store: new SqlImageBuildStore(handle.db),
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async (): Promise<Backend> => {
    const pg = await openTestPostgres();
    return { db: pg.handle.db, store: new SqlImageBuildStore(pg.handle.db), close: () => pg.dispose() };
  },
} as const;

const BASE = "localhost/awaken-base:1";
const res = (c: string) => `pkgres_${c.repeat(32)}`;

/** An environment head row: all the list reads of it is its workspace, name and latest revision. */
async function environment(db: Db, id: string, workspaceId: string, latestRevision = 1) {
  await db
    .insertInto("environments")
    .values({
      id,
      workspace_id: workspaceId,
      name: `${id}-name`,
      description: null,
      scope: null,
      metadata_json: "{}",
      config_type: "cloud",
      latest_revision: latestRevision,
      created_at: 1,
      updated_at: 1,
      archived_at: null,
    })
    .execute();
}

for (const [name, open] of Object.entries(BACKENDS)) {
  describe.skipIf(name === "PostgreSQL" && postgresUnavailable() !== null)(
    `a workspace's image builds (${name})`,
    () => {
      let backend: Backend;
      beforeEach(async () => {
        backend = await open();
      });
      afterEach(async () => {
        await backend.close();
      });

      it("a shared build shows each workspace its own environments only", async () => {
        const { db, store } = backend;
        await environment(db, "env_a1", "wrkspc_a", 2);
        await environment(db, "env_b1", "wrkspc_b");
        await environment(db, "env_b2", "wrkspc_b");
        const shared = await store.demand(imageBuildKey(BASE, res("a")), "env_a1", 1, 10);
        const newer = await store.demand(imageBuildKey(BASE, res("b")), "env_a1", 2, 20);
        expect((await store.demand(imageBuildKey(BASE, res("a")), "env_b1", 1, 30)).id).toBe(shared.id);
        const theirs = await store.demand(imageBuildKey(BASE, res("c")), "env_b2", 1, 40);
        // A link whose environment is gone (deleted) makes nothing visible to anyone.
        await store.demand(imageBuildKey(BASE, res("d")), "env_deleted", 1, 50);

        const a = await store.listForWorkspace("wrkspc_a", { limit: 20, cursor: null });
        expect(a.nextCursor).toBeNull();
        expect(a.data.map((item) => item.build.id)).toEqual([newer.id, shared.id]);
        expect(a.data[0]?.environments).toEqual([
          { environmentId: "env_a1", name: "env_a1-name", revisions: [2], current: true },
        ]);
        expect(a.data[1]?.environments).toEqual([
          { environmentId: "env_a1", name: "env_a1-name", revisions: [1], current: false },
        ]);
        expect(JSON.stringify(a)).not.toContain("env_b");

        const b = await store.listForWorkspace("wrkspc_b", { limit: 20, cursor: null });
        expect(b.data.map((item) => item.build.id)).toEqual([theirs.id, shared.id]);
        expect(b.data[1]?.environments).toEqual([
          { environmentId: "env_b1", name: "env_b1-name", revisions: [1], current: true },
        ]);
        expect(JSON.stringify(b)).not.toContain("env_a1");

        expect((await store.listForWorkspace("wrkspc_none", { limit: 20, cursor: null })).data).toEqual([]);
      });

      it("pages newest first without gaps or repeats; a forged cursor is refused", async () => {
        const { db, store } = backend;
        await environment(db, "env_1", "wrkspc_a", 5);
        const made: string[] = [];
        for (const [i, c] of ["1", "2", "3", "4", "5"].entries())
          made.push((await store.demand(imageBuildKey(BASE, res(c)), "env_1", i + 1, 100)).id);
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let page = 0; page < 10; page++) {
          const got = await store.listForWorkspace("wrkspc_a", { limit: 2, cursor });
          seen.push(...got.data.map((item) => item.build.id));
          cursor = got.nextCursor;
          if (cursor === null) break;
        }
        // Equal creation times: ordered by id, descending.
        expect(seen).toEqual([...made].sort().reverse());
        const forged = Buffer.from(JSON.stringify({ list: "image_builds", at: 1.5, id: "x" })).toString(
          "base64url",
        );
        await expect(store.listForWorkspace("wrkspc_a", { limit: 2, cursor: forged })).rejects.toMatchObject({
          code: "invalid_request",
        });
      });
    },
  );
}
