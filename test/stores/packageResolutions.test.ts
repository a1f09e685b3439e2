/**
 * A revision's frozen package resolution on a SQLite file and on PostgreSQL: recorded once, first
 * writer wins (a second, different resolution is dropped and its writer reads the first), kept per
 * revision, and read back exactly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PackageResolution, packageResolution } from "../../src/kernel/packageResolution.js";
import { SqlEnvironmentStore } from "../../src/stores/sql/sqlEnvironmentStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

interface Backend {
  store: SqlEnvironmentStore;
  close(): Promise<void>;
}

const BACKENDS = {
  "SQLite file": async (): Promise<Backend> => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-resolutions-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    return {
      store: new SqlEnvironmentStore(handle.db),
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async (): Promise<Backend> => {
    const pg = await openTestPostgres();
    return { store: new SqlEnvironmentStore(pg.handle.db), close: () => pg.dispose() };
  },
} as const;

function resolution(version: string): PackageResolution {
  return packageResolution({
    format: 1,
    npm: {
      lockfile: {
        lockfileVersion: 3,
        packages: {
          "": { dependencies: { left: "^1" } },
          "node_modules/left": {
            version,
            resolved: `http://registry.test/left/-/left-${version}.tgz`,
            integrity: "sha512-AAAA",
          },
        },
      },
    },
    pip: null,
    unfrozen: [],
  });
}

for (const [name, open] of Object.entries(BACKENDS)) {
  describe.skipIf(name === "PostgreSQL" && postgresUnavailable() !== null)(
    `package resolutions (${name})`,
    () => {
      let backend: Backend;
      beforeEach(async () => {
        backend = await open();
      });
      afterEach(async () => {
        await backend.close();
      });

      it("first writer wins per revision; the loser reads the winner's; revisions are apart", async () => {
        const { store } = backend;
        expect(await store.packageResolution("env_a", 1)).toBeNull();
        const first = resolution("1.0.0");
        const second = resolution("1.1.0");
        expect(first.id).not.toBe(second.id);
        const [a, b] = await Promise.all([
          store.recordPackageResolution("env_a", 1, first, 1),
          store.recordPackageResolution("env_a", 1, second, 2),
        ]);
        expect(b).toEqual(a);
        const winner = a.id === first.id ? first : second;
        expect(a).toEqual(winner);
        expect(await store.packageResolution("env_a", 1)).toEqual(winner);
        expect(await store.recordPackageResolution("env_a", 1, resolution("2.0.0"), 3)).toEqual(winner);
        expect(await store.packageResolution("env_a", 2)).toBeNull();
        expect(await store.recordPackageResolution("env_a", 2, second, 4)).toEqual(second);
      });
    },
  );
}
