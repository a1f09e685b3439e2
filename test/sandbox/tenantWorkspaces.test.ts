/**
 * One tenant (an Awaken workspace) holds a bounded number of session workspaces on a host, so
 * opening many sessions cannot fill the host's disk: a new workspace past the bound is refused
 * with an error naming it, existing ones keep serving, and a deleted session frees its place.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { workspacesPerTenantFromEnv } from "../../src/sandbox/limitsFromEnv.js";
import { NoneTierProvider } from "../../src/sandbox/noneTier.js";
import { PackagePreparer } from "../../src/sandbox/packagePreparer.js";
import {
  type PackageLists,
  type PreparedPackages,
  SandboxUnavailableError,
} from "../../src/sandbox/ports.js";
import { TieredSandboxProvider } from "../../src/sandbox/tieredProvider.js";
import { TenantWorkspaces } from "../../src/sandbox/workspaces.js";

describe("session workspaces per tenant on a host", () => {
  let root: string;
  let sandboxes: TieredSandboxProvider;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "tenants-"));
    sandboxes = new TieredSandboxProvider(
      { none: new NoneTierProvider(root) },
      undefined,
      new TenantWorkspaces(root, 2),
    );
  });
  afterEach(async () => {
    await sandboxes.close();
    await rm(root, { recursive: true, force: true });
  });

  const realize = (tenant: string, sessionId: string) =>
    sandboxes.realize({ tier: "none", sessionId, tenant, networking: { type: "unrestricted" } });

  it("refuses a tenant's new workspace past the bound, naming it; others and existing ones still serve", async () => {
    await realize("wrkspc_a", "sesn_1");
    await realize("wrkspc_a", "sesn_2");
    const refused = realize("wrkspc_a", "sesn_3");
    await expect(refused).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(refused).rejects.toThrow(
      /this workspace already has 2 sessions with a sandbox workspace on this worker, the most it may have: delete sessions/,
    );
    expect(existsSync(join(root, "sesn_3"))).toBe(false);
    // Another tenant is not held back by this one; the tenant's existing workspaces serve.
    await realize("wrkspc_b", "sesn_4");
    const again = await realize("wrkspc_a", "sesn_1");
    expect(
      (
        await again.exec({
          argv: ["true"],
          timeoutMs: 5_000,
          maxOutputBytes: 1024,
          signal: new AbortController().signal,
        })
      ).exitCode,
    ).toBe(0);
    // A deleted session frees its place.
    await sandboxes.destroy("sesn_1");
    await realize("wrkspc_a", "sesn_3");
    await expect(realize("wrkspc_a", "sesn_5")).rejects.toThrow(/already has 2 sessions/);
  });

  it("holds concurrent first uses of one tenant to the bound", async () => {
    const outcomes = await Promise.allSettled(
      ["sesn_a", "sesn_b", "sesn_c", "sesn_d"].map((id) => realize("wrkspc_c", id)),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(2);
  });

  it("keeps the register file (and the count) of a session admitted whose workspace is not made yet", async () => {
    // The first session's workspace is made only once `release` is called: admitted, not yet made.
    const none = new NoneTierProvider(root);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const admitted = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const gated = new TieredSandboxProvider(
      {
        none: {
          realize: async (spec) => {
            if (spec.sessionId === "sesn_slow") {
              entered();
              await held;
            }
            return none.realize(spec);
          },
          destroy: (sessionId) => none.destroy(sessionId),
          close: () => none.close(),
        },
      },
      undefined,
      new TenantWorkspaces(root, 2),
    );
    const realizeGated = (sessionId: string) =>
      gated.realize({
        tier: "none",
        sessionId,
        tenant: "wrkspc_g",
        erasedAt: 1_000,
        networking: { type: "unrestricted" },
      });
    try {
      const slow = realizeGated("sesn_slow");
      await admitted;
      expect(existsSync(join(root, "sesn_slow"))).toBe(false);
      await realizeGated("sesn_fast");
      await expect(realizeGated("sesn_third")).rejects.toThrow(/already has 2 sessions/);
      release();
      await slow;
      // Its next tool call finds its workspace stamped: kept, with what it wrote.
      const notes = join(root, "sesn_slow", "notes.txt");
      await writeFile(notes, "written after the erasure");
      await realizeGated("sesn_slow");
      expect(existsSync(notes)).toBe(true);
    } finally {
      release();
      await gated.close();
    }
  });

  it("refuses a session past the bound before preparing its packages", async () => {
    const prepared: PackageLists[] = [];
    class CountingPreparer extends PackagePreparer {
      override async prepare(packages: PackageLists): Promise<PreparedPackages> {
        prepared.push(packages);
        return { hash: "h", dir: join(root, "no-packages") };
      }
    }
    const withPackages = new TieredSandboxProvider(
      { none: new NoneTierProvider(root) },
      new CountingPreparer({ root, env: {} }),
      new TenantWorkspaces(root, 1),
    );
    const realizeWith = (sessionId: string) =>
      withPackages.realize({
        tier: "none",
        sessionId,
        tenant: "wrkspc_p",
        packages: { npm: ["left-pad@1.3.0"] },
        networking: { type: "unrestricted" },
      });
    try {
      await realizeWith("sesn_p1");
      await expect(realizeWith("sesn_p2")).rejects.toThrow(/already has 1 sessions/);
      expect(prepared).toHaveLength(1);
    } finally {
      await withPackages.close();
    }
  });

  it("counts workspaces made before the register existed once they are used again", async () => {
    // A workspace left by an earlier version of the worker (no register entry yet).
    await new TieredSandboxProvider({ none: new NoneTierProvider(root) }).realize({
      tier: "none",
      sessionId: "sesn_old",
      networking: { type: "unrestricted" },
    });
    await realize("wrkspc_d", "sesn_old");
    await realize("wrkspc_d", "sesn_new");
    await expect(realize("wrkspc_d", "sesn_third")).rejects.toThrow(/already has 2 sessions/);
  });

  it("deletes a workspace made before its subject's latest erasure before the sandbox starts; keeps one made after", async () => {
    const realizeErased = (sessionId: string, erasedAt?: number) =>
      sandboxes.realize({
        tier: "none",
        sessionId,
        tenant: "wrkspc_e",
        networking: { type: "unrestricted" },
        ...(erasedAt === undefined ? {} : { erasedAt }),
      });
    const notes = join(root, "sesn_e", "notes.txt");
    await realizeErased("sesn_e");
    await writeFile(notes, "the subject's content");
    await realizeErased("sesn_e");
    expect(existsSync(notes)).toBe(true);
    // A remote worker held it while the erasure ran: the next claim says when that was.
    await realizeErased("sesn_e", 1_000);
    expect(existsSync(notes)).toBe(false);
    expect(existsSync(join(root, "sesn_e"))).toBe(true);
    // Written after this host learned of the erasure: kept, until a newer erasure.
    await writeFile(notes, "written after the erasure");
    await realizeErased("sesn_e", 1_000);
    expect(existsSync(notes)).toBe(true);
    await realizeErased("sesn_e", 2_000);
    expect(existsSync(notes)).toBe(false);
    // A workspace no register knows (an earlier worker version made it) goes if its subject was erased.
    await new NoneTierProvider(root).realize({
      tier: "none",
      sessionId: "sesn_f",
      networking: { type: "unrestricted" },
    });
    await writeFile(join(root, "sesn_f", "old.txt"), "old");
    await sandboxes.realize({
      tier: "none",
      sessionId: "sesn_f",
      tenant: "wrkspc_e",
      erasedAt: 500,
      networking: { type: "unrestricted" },
    });
    expect(existsSync(join(root, "sesn_f", "old.txt"))).toBe(false);
  });

  it("takes the bound from AWAKEN_SANDBOX_WORKSPACES_PER_TENANT (default 100)", () => {
    expect(workspacesPerTenantFromEnv({})).toBe(100);
    expect(workspacesPerTenantFromEnv({ AWAKEN_SANDBOX_WORKSPACES_PER_TENANT: "20" })).toBe(20);
    for (const bad of ["0", "many", "-1", "1.5"]) {
      expect(() => workspacesPerTenantFromEnv({ AWAKEN_SANDBOX_WORKSPACES_PER_TENANT: bad })).toThrow(
        /AWAKEN_SANDBOX_WORKSPACES_PER_TENANT must be a whole number of at least 1/,
      );
    }
  });
});
