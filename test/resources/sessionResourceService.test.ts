import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CoordinatorStores } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import { OutboundConnector } from "../../src/kernel/outboundConnector.js";
import { LocalBlobStore } from "../../src/resources/blobs/localBlobStore.js";
import type { ResourceStores } from "../../src/resources/services.js";
import { SessionResourceService } from "../../src/resources/sessionResources/sessionResourceService.js";
import { FieldSealer } from "../../src/secrets/fieldSealer.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { repositoryTokenSealer } from "../../src/secrets/scopedSealers.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { resourceStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import { ManualClock, seedSession } from "../support/storeFixtures.js";

// What the runtime asks of session resources (`listForRun`, `openRepositoryToken`) on both
// backends, with the real sealer Control lends: tokens open only at their current revision and
// only through `repo:` identities, and a server without a sealer refuses a token plainly.

interface Fixture {
  coordinator: CoordinatorStores;
  resources: ResourceStores;
  close(): Promise<void>;
}

const BACKENDS: Record<string, (clock: ManualClock) => Promise<Fixture>> = {
  SQLite: async (clock) => {
    const handle = await openSqlite(":memory:");
    return {
      coordinator: sqliteCoordinatorStores(handle, clock),
      resources: resourceStores(handle.db, "sqlite"),
      close: () => handle.close(),
    };
  },
  PostgreSQL: async (clock) => {
    const pg = await openTestPostgres();
    return {
      coordinator: postgresCoordinatorStores(pg.handle, clock),
      resources: resourceStores(pg.handle.db, "postgres"),
      close: () => pg.dispose(),
    };
  },
};
const RUNNING = Object.keys(BACKENDS).filter((n) => n !== "PostgreSQL" || postgresUnavailable() === null);

const WS = "wrkspc_test";
const REPO = "https://140.82.112.3/acme/widgets.git";

describe.each(RUNNING)("session resources for a run: %s", (backend) => {
  let fx: Fixture;
  let clock: ManualClock;
  let blobDir: string;
  let fieldSealer: FieldSealer;
  const service = (withSealer = true) =>
    new SessionResourceService({
      stores: fx.resources,
      blobs: new LocalBlobStore(blobDir),
      clock,
      env: {},
      outbound: new OutboundConnector(),
      ...(withSealer ? { sealer: repositoryTokenSealer(fieldSealer) } : {}),
    });

  beforeEach(async () => {
    clock = new ManualClock();
    fx = await BACKENDS[backend]!(clock);
    blobDir = mkdtempSync(join(tmpdir(), "awaken-sesrsc-blobs-"));
    fieldSealer = new FieldSealer(new LocalSecretStore({ id: "mk_test", key: Buffer.alloc(32, 7) }));
  });
  afterEach(async () => {
    await fx.close();
    rmSync(blobDir, { recursive: true, force: true });
  });

  async function sessionWith(svc: SessionResourceService, dataSubject: string | null = null) {
    const now = clock.now();
    const fileId = newId("file", now);
    await fx.resources.files.create(
      {
        id: fileId,
        workspaceId: WS,
        filename: "notes.txt",
        mimeType: "text/plain",
        sizeBytes: 5,
        digest: `sha256:${"b".repeat(64)}`,
        createdAt: now,
        downloadable: true,
        scopeId: null,
        expiresAt: null,
      },
      1 << 20,
    );
    const storeId = newId("memstore", now);
    await fx.resources.memory.createStore({
      id: storeId,
      workspaceId: WS,
      name: "Team Notes",
      description: "shared",
      metadata: {},
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    });
    // A session as creation writes it: its resources prepared first, then written in its transaction.
    const template = await seedSession(fx.coordinator, clock);
    const session = { ...template, id: newId("sesn", now), threadId: newId("sthr", now), dataSubject };
    const prepared = await svc.prepare(
      WS,
      session.id,
      [
        { type: "file", fileId, mountPath: null },
        { type: "memory_store", memoryStoreId: storeId, access: null, instructions: null },
        {
          type: "github_repository",
          url: REPO,
          authorizationToken: "ghp_first",
          checkout: { type: "commit", sha: "a".repeat(40) },
          mountPath: null,
        },
      ],
      clock.now(),
    );
    await fx.coordinator.sessions.create(session, prepared);
    return { sessionId: session.id, fileId, storeId, repoId: prepared[2]!.id };
  }

  it("lists what a run realizes, files joined with their blob's facts, and opens the token", async () => {
    const svc = service();
    const { sessionId, fileId, storeId, repoId } = await sessionWith(svc);
    const run = await svc.listForRun(WS, sessionId);
    expect(run).toEqual([
      {
        type: "file",
        id: expect.stringMatching(/^sesrsc_/),
        fileId,
        mountPath: `/mnt/session/uploads/${fileId}`,
        filename: "notes.txt",
        mimeType: "text/plain",
        sizeBytes: 5,
        digest: `sha256:${"b".repeat(64)}`,
      },
      {
        type: "memory_store",
        memoryStoreId: storeId,
        mountPath: "/mnt/memory/team-notes",
        access: "read_write",
        name: "Team Notes",
        description: "shared",
        instructions: null,
      },
      {
        type: "github_repository",
        id: repoId,
        url: REPO,
        mountPath: "/workspace/widgets",
        checkout: { type: "commit", sha: "a".repeat(40) },
        hasToken: true,
      },
    ]);
    expect((await svc.openRepositoryToken(WS, sessionId, repoId))?.toString()).toBe("ghp_first");
    // Another workspace, another session or a resource without a token opens nothing.
    expect(await svc.openRepositoryToken("wrkspc_other", sessionId, repoId)).toBeNull();
    expect(await svc.openRepositoryToken(WS, "sesn_other", repoId)).toBeNull();
    expect(await svc.listForRun("wrkspc_other", sessionId)).toEqual([]);
  });

  it("a rotation seals the next revision: the old sealed copy no longer opens", async () => {
    const svc = service();
    const { sessionId, repoId } = await sessionWith(svc);
    const before = await fx.resources.sessionResources.get(WS, sessionId, repoId);
    clock.advance(1_000);
    const rotated = await svc.update(WS, sessionId, repoId, "ghp_second");
    expect(rotated.type === "github_repository" && rotated.tokenRevision).toBe(2);
    expect((await svc.openRepositoryToken(WS, sessionId, repoId))?.toString()).toBe("ghp_second");
    // Put the first revision's sealed token back under the new revision: it must not open.
    if (before?.type !== "github_repository" || !before.sealedToken) throw new Error("no sealed token");
    await fx.resources.sessionResources.rotateToken(
      WS,
      sessionId,
      repoId,
      before.sealedToken,
      3,
      clock.now(),
    );
    expect(await svc.openRepositoryToken(WS, sessionId, repoId)).toBeNull();
  });

  it("a session's deletion and its data subject's erasure remove its resources and sealed tokens", async () => {
    const svc = service();
    const deleted = await sessionWith(svc);
    await fx.coordinator.ledger.deleteSession(
      deleted.sessionId,
      { id: newId("sevt", clock.now()), type: "session.deleted", body: {} },
      clock.now(),
    );
    expect(
      (await fx.resources.sessionResources.listAll(WS, [deleted.sessionId])).get(deleted.sessionId),
    ).toEqual([]);

    const erased = await sessionWith(svc, "subject-1");
    await fx.coordinator.erasure.erase({
      workspaceId: WS,
      subjectId: "subject-1",
      id: newId("ersr", clock.now()),
      requestedBy: "key_test",
      now: clock.now(),
      audit: () => testAudit("data_subject"),
    });
    expect(
      (await fx.resources.sessionResources.listAll(WS, [erased.sessionId])).get(erased.sessionId),
    ).toEqual([]);
    expect(await svc.openRepositoryToken(WS, erased.sessionId, erased.repoId)).toBeNull();
  });

  it("concurrent adds of overlapping mounts: exactly one is written, the others refused naming the clash", async () => {
    const svc = service();
    const { sessionId, fileId } = await sessionWith(svc);
    // Pairwise overlapping: whichever add takes the session first, every other one clashes with it.
    const paths = ["/c", "/c/a", "/c/a/b", "/c/a", "/c"];
    const outcomes = await Promise.allSettled(
      paths.map((mountPath) => svc.add(WS, sessionId, { type: "file", fileId, mountPath })),
    );
    const written = outcomes.filter((o) => o.status === "fulfilled");
    expect(written).toHaveLength(1);
    for (const o of outcomes)
      if (o.status === "rejected") expect(String(o.reason)).toMatch(/mount path .* (overlaps|is already)/);
    const rows = (await fx.resources.sessionResources.listAll(WS, [sessionId])).get(sessionId) ?? [];
    expect(rows.filter((r) => r.mountPath.startsWith("/c"))).toHaveLength(1);
  });

  it("a bad AWAKEN_SESSION_RESOURCES_MAX stops composition, naming the variable", () => {
    for (const bad of ["0", "-1", "ten", "1e3", "100001"]) {
      expect(
        () =>
          new SessionResourceService({
            stores: fx.resources,
            blobs: new LocalBlobStore(blobDir),
            clock,
            env: { AWAKEN_SESSION_RESOURCES_MAX: bad },
            outbound: new OutboundConnector(),
          }),
      ).toThrow(/AWAKEN_SESSION_RESOURCES_MAX/);
    }
  });

  it("the lent sealer refuses every identity but a repository's", async () => {
    const sealer = repositoryTokenSealer(fieldSealer);
    await expect(
      sealer.seal({ credentialId: "vcrd_x", revision: 1, workspaceId: WS }, { token: "t" }),
    ).rejects.toThrow(/only repository resources/);
    const { sealed } = await fieldSealer.seal(
      { credentialId: "push:t/c", revision: 1, workspaceId: WS },
      { token: "t" },
    );
    await expect(
      sealer.openField({ credentialId: "push:t/c", revision: 1, workspaceId: WS }, sealed, "token"),
    ).rejects.toThrow(/only repository resources/);
  });

  it("without a sealer a token is refused plainly, and a repository without one is still attached", async () => {
    const svc = service(false);
    const session = await seedSession(fx.coordinator, clock);
    await expect(
      svc.prepare(
        WS,
        session.id,
        [
          {
            type: "github_repository",
            url: REPO,
            authorizationToken: "ghp_x",
            checkout: null,
            mountPath: null,
          },
        ],
        clock.now(),
      ),
    ).rejects.toThrow(/no sealer is configured/);
    const [plain] = await svc.prepare(
      WS,
      session.id,
      [{ type: "github_repository", url: REPO, authorizationToken: null, checkout: null, mountPath: null }],
      clock.now(),
    );
    expect(plain).toMatchObject({ type: "github_repository", sealedToken: null });
  });
});
