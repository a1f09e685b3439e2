import { afterEach, describe, expect, it } from "vitest";
import { RegisteredAgentPinner } from "../../src/control/agentPinning.js";
import { AgentService } from "../../src/control/agentService.js";
import { LocalRegistrar } from "../../src/coordinator/registrar.js";
import { systemClock } from "../../src/kernel/clock.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { controlStores, coordinatorStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";

// Control's AgentPinner over the real publication store and catalog: what a session pins.

const WS = "wrkspc_a";
let handle: SqliteHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
});

async function setup() {
  handle = await openSqlite(":memory:");
  const catalog = coordinatorStores(handle.db, systemClock).catalog;
  const agents = new AgentService(
    controlStores(handle.db).publications,
    new LocalRegistrar(catalog, systemClock),
    systemClock,
  );
  const created = await agents.create(
    { workspaceId: WS, actor: "cli" },
    { name: "a", model: "claude-sonnet-4-5", system: "v1" },
  );
  await agents.update({ workspaceId: WS, actor: "cli" }, created.head.id, { system: "v2" });
  return { agents, catalog, pinner: new RegisteredAgentPinner(agents), id: created.head.id };
}

async function errorOf(promise: Promise<unknown>): Promise<AwakenError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof AwakenError)) throw new Error(`expected an AwakenError, got ${String(error)}`);
  return error;
}

describe("agent pinning", () => {
  it("pins the latest version, or exactly the one named, as registered in the catalog", async () => {
    const { pinner, catalog, id } = await setup();
    const latest = await pinner.pin(WS, { id });
    expect(latest).toMatchObject({ workspaceId: WS, agentId: id, version: 2, definition: { system: "v2" } });
    const v1 = await pinner.pin(WS, { id, version: 1 });
    expect(v1).toMatchObject({ version: 1, definition: { system: "v1" } });
    expect(v1.fingerprint).not.toBe(latest.fingerprint);
    expect((await catalog.get(WS, id, 1))?.fingerprint).toBe(v1.fingerprint);
  });

  it("with overrides pins a derived snapshot: source version, own fingerprint, validated whole", async () => {
    const { pinner, id } = await setup();
    const plain = await pinner.pin(WS, { id, version: 1 });
    const derived = await pinner.pin(WS, { id, version: 1, overrides: { system: "session only" } });
    expect(derived).toMatchObject({
      agentId: id,
      version: 1,
      definition: { system: "session only", name: "a" },
    });
    expect(derived.fingerprint).not.toBe(plain.fingerprint);
    // Overrides that change nothing derive an identical definition, so the same fingerprint.
    expect((await pinner.pin(WS, { id, version: 1, overrides: {} })).fingerprint).toBe(plain.fingerprint);
    const twoToolsets = {
      tools: [{ type: "agent_toolset_20260401" }, { type: "agent_toolset_20260401" }],
    };
    const invalid = await errorOf(pinner.pin(WS, { id, overrides: twoToolsets }));
    expect(invalid.category).toBe("invalid");
    expect(invalid.message).toMatch(/at most one agent_toolset_20260401/);
  });

  it("refuses unknown agents and versions, other workspaces' agents and archived agents", async () => {
    const { pinner, agents, id } = await setup();
    expect((await errorOf(pinner.pin(WS, { id: "agent_missing" }))).code).toBe("not_found");
    expect((await errorOf(pinner.pin("wrkspc_other", { id }))).code).toBe("not_found");
    const noVersion = await errorOf(pinner.pin(WS, { id, version: 3 }));
    expect(noVersion.code).toBe("not_found");
    expect(noVersion.message).toContain("has no version 3");
    await agents.archive({ workspaceId: WS, actor: "cli" }, id);
    const archived = await errorOf(pinner.pin(WS, { id }));
    expect(archived.category).toBe("invalid");
    expect(archived.message).toBe(`agent ${id} is archived and cannot start new sessions`);
  });
});
