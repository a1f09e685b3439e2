/**
 * The registration reconciler waits on its clock: with the product's figures (a 5 s poll, 1 s
 * doubling to 30 s while the Coordinator is away) a test steps through the backoff by advancing
 * the clock, and no real time passes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentService } from "../../src/control/agentService.js";
import type { RegistrationLog } from "../../src/control/publicationRegistration.js";
import { RegistrationReconciler } from "../../src/control/registrationReconciler.js";
import type { ExecutableAgentRegistrar, ExecutableAgentSnapshot } from "../../src/coordinator/ports.js";
import { LocalRegistrar } from "../../src/coordinator/registrar.js";
import { AwakenError } from "../../src/kernel/errors.js";
import type { Db } from "../../src/stores/sql/db.js";
import { controlStores, coordinatorStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { SteppedClock } from "../support/steppedClock.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const quiet: RegistrationLog = { info: () => {}, warn: () => {}, error: () => {} };

describe("the registration reconciler on an injected clock", () => {
  it("backs off 1 s, 2 s, 4 s on the clock while the Coordinator is away, then lands the publication", async () => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-reconciler-clock-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    cleanups.push(async () => {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const db = handle.db as Db;
    const clock = new SteppedClock();
    const store = controlStores(db).publications;
    const catalog = coordinatorStores(db, clock, "sqlite").catalog;
    const local = new LocalRegistrar(catalog, clock);
    let down = true;
    let attempts = 0;
    const coordinator: ExecutableAgentRegistrar = {
      register: async (snapshot: ExecutableAgentSnapshot) => {
        attempts += 1;
        if (down) throw new AwakenError("unavailable", "coordinator unreachable", { retryable: true });
        return local.register(snapshot);
      },
    };
    const agents = new AgentService(store, coordinator, clock, quiet);
    const created = await agents.create(
      { workspaceId: "wrkspc_clock", actor: "cli" },
      { name: "a", model: "claude-sonnet-4-5" },
    );
    expect(attempts).toBe(1); // the create's own attempt; the reconciler has not run
    const reconciler = new RegistrationReconciler({ store, registrar: coordinator, clock, log: quiet });
    cleanups.push(() => reconciler.stop());

    reconciler.start();
    await clock.advance(0);
    expect(attempts).toBe(2);
    for (const wait of [1_000, 2_000, 4_000]) {
      await clock.advance(wait - 1);
      expect(reconciler.nextDelayMs).toBe(wait);
      const before = attempts;
      await clock.advance(1);
      expect(attempts).toBe(before + 1);
    }
    down = false;
    await clock.advance(8_000);
    expect(await catalog.get("wrkspc_clock", created.head.id, 1)).not.toBeNull();
    expect(reconciler.nextDelayMs).toBe(5_000);
  });
});
