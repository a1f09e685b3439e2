/**
 * Image-build demands on a SQLite file and on PostgreSQL: identical inputs converge on one demand,
 * claims advance the epoch under a lease, a lapsed lease is claimable by the next worker, a stale
 * holder's settle/renew/release is refused (the fence), a failure is retried only by rebuild, and
 * concurrent claimers of one build never both win.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ImageBuildStore } from "../../src/coordinator/imageBuilds/ports.js";
import { type ImageBuildRecord, imageBuildKey } from "../../src/kernel/imageBuild.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

interface Backend {
  store: ImageBuildStore;
  close(): Promise<void>;
}

const BACKENDS = {
  "SQLite file": async (): Promise<Backend> => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-imagebuilds-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    return {
      store: new SqlImageBuildStore(handle.db),
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async (): Promise<Backend> => {
    const pg = await openTestPostgres();
    return { store: new SqlImageBuildStore(pg.handle.db), close: () => pg.dispose() };
  },
} as const;

const BASE = "localhost/awaken-base:1";
const RES_A = `pkgres_${"a".repeat(32)}`;
const RES_B = `pkgres_${"b".repeat(32)}`;
const DIGEST = `sha256:${"c".repeat(64)}`;
const LEASE_MS = 1_000;

function ready(digest = DIGEST) {
  return {
    kind: "ready" as const,
    digest,
    imageReference: `127.0.0.1:5000/awaken/x@${digest}`,
    logTail: "ok",
  };
}

function leaseOf(build: ImageBuildRecord) {
  return { buildId: build.id, owner: build.owner ?? "", epoch: build.epoch };
}

for (const [name, open] of Object.entries(BACKENDS)) {
  describe.skipIf(name === "PostgreSQL" && postgresUnavailable() !== null)(`image builds (${name})`, () => {
    let backend: Backend;
    beforeEach(async () => {
      backend = await open();
    });
    afterEach(async () => {
      await backend.close();
    });

    it("identical inputs converge on one demand; other inputs are another", async () => {
      const { store } = backend;
      const a = await store.demand(imageBuildKey(BASE, RES_A), "env_1", 1, 10);
      const again = await store.demand(imageBuildKey(BASE, RES_A), "env_2", 1, 20);
      const other = await store.demand(imageBuildKey(BASE, RES_B), "env_3", 1, 30);
      expect(again.id).toBe(a.id);
      expect(other.id).not.toBe(a.id);
      expect(a).toMatchObject({
        state: "pending",
        epoch: 0,
        digest: null,
        baseImage: BASE,
        resolutionId: RES_A,
      });
      expect((await store.forRevision("env_2", 1))?.id).toBe(a.id);
      expect(await store.forRevision("env_2", 2)).toBeNull();
    });

    it("a claim leases with a new epoch; the settled digest is what every revision sees", async () => {
      const { store } = backend;
      await store.demand(imageBuildKey(BASE, RES_A), "env_1", 1, 10);
      const claimed = await store.claim("worker-1", LEASE_MS, 100);
      expect(claimed).toMatchObject({
        state: "building",
        owner: "worker-1",
        epoch: 1,
        leaseExpiresAt: 1_100,
      });
      expect(await store.claim("worker-2", LEASE_MS, 200)).toBeNull();
      const renewed = await store.renew(leaseOf(claimed as ImageBuildRecord), LEASE_MS, 900);
      expect(renewed).toMatchObject({ leaseExpiresAt: 1_900 });
      const settled = await store.settle(leaseOf(claimed as ImageBuildRecord), ready(), 1_000);
      expect(settled).toMatchObject({ state: "ready", digest: DIGEST, owner: null });
      // A second environment with the same inputs reuses it: already ready, nothing to build.
      const reuse = await store.demand(imageBuildKey(BASE, RES_A), "env_9", 4, 2_000);
      expect(reuse).toMatchObject({ state: "ready", digest: DIGEST });
      expect(await store.claim("worker-2", LEASE_MS, 2_000)).toBeNull();
    });

    it("a lapsed lease is claimed by the next worker, and the stale holder is fenced out", async () => {
      const { store } = backend;
      await store.demand(imageBuildKey(BASE, RES_A), "env_1", 1, 10);
      const first = (await store.claim("worker-1", LEASE_MS, 100)) as ImageBuildRecord;
      const second = (await store.claim("worker-2", LEASE_MS, 1_100)) as ImageBuildRecord;
      expect(second).toMatchObject({ id: first.id, owner: "worker-2", epoch: 2, attempts: 2 });
      const stale = await store.settle(leaseOf(first), ready(), 1_200);
      expect(stale).toMatchObject({ refused: expect.stringContaining("epoch 2 is current") });
      expect(await store.renew(leaseOf(first), LEASE_MS, 1_200)).toHaveProperty("refused");
      expect(await store.release(leaseOf(first), 1_200)).toHaveProperty("refused");
      // The current holder past its own lease is refused too: no digest lands on a lapsed claim.
      expect(await store.settle(leaseOf(second), ready(), 2_100)).toMatchObject({
        refused: expect.stringContaining("lease expired"),
      });
      expect((await store.get(first.id))?.digest).toBeNull();
    });

    it("release hands the build back; failure stays until an explicit rebuild", async () => {
      const { store } = backend;
      await store.demand(imageBuildKey(BASE, RES_A), "env_1", 1, 10);
      const first = (await store.claim("worker-1", LEASE_MS, 100)) as ImageBuildRecord;
      expect(await store.release(leaseOf(first), 200)).toMatchObject({ state: "pending", owner: null });
      const second = (await store.claim("worker-2", LEASE_MS, 300)) as ImageBuildRecord;
      expect(second.epoch).toBe(2);
      const failed = await store.settle(
        leaseOf(second),
        { kind: "failed", error: "npm ci exited 1", logTail: "npm ERR! 404" },
        400,
      );
      expect(failed).toMatchObject({ state: "failed", error: "npm ci exited 1", logTail: "npm ERR! 404" });
      expect(await store.claim("worker-3", LEASE_MS, 500)).toBeNull();
      expect(await store.rebuild(first.id, 600)).toMatchObject({ state: "pending", error: null });
      expect(await store.rebuild(first.id, 700)).toBeNull();
      expect(await store.claim("worker-3", LEASE_MS, 800)).toMatchObject({ owner: "worker-3", epoch: 3 });
    });

    it("concurrent claimers of one build: exactly one wins", async () => {
      const { store } = backend;
      await store.demand(imageBuildKey(BASE, RES_A), "env_1", 1, 10);
      const claims = await Promise.all(
        ["w1", "w2", "w3", "w4"].map((owner) => store.claim(owner, LEASE_MS, 100)),
      );
      expect(claims.filter((c) => c !== null)).toHaveLength(1);
    });
  });
}
