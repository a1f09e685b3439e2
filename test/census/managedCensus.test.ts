/**
 * The census: every operation of the SDK's Managed family is served, on SQLite and on PostgreSQL,
 * and every answer has the type the SDK declares for it. The operations and their types are read
 * from the installed SDK's own declarations, so a later SDK that adds an operation or a required
 * field makes this fail until the server catches up.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startFakeOpenAI } from "../support/fakeOpenAIServer.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { startTestServer, type TestServer } from "../support/testServer.js";
import { CensusRecorder } from "./censusRecorder.js";
import * as scenario from "./managedScenario.js";
import { BEYOND_FAMILY, loadSdkSurface, type SdkSurface } from "./sdkSurface.js";

let surface: SdkSurface;
beforeAll(() => {
  surface = loadSdkSurface();
}, 60_000);

describe("the SDK's Managed family", () => {
  it("is 137 operations: 116 beta and 21 generally available (and 6 webhook endpoint operations beside it)", () => {
    const family = surface.operations.filter(
      (op) => !BEYOND_FAMILY.some((path) => op.path.startsWith(`${path}.`)),
    );
    const beta = family.filter((op) => op.path.startsWith("beta."));
    expect(beta).toHaveLength(116);
    expect(family.length - beta.length).toBe(21);
    expect(surface.operations.length - family.length).toBe(6);
  });
});

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
/** An OpenAI-family id: the census server sends it to `held`, which never answers. */
const HELD_MODEL = "gpt-census-held";

describe.each(BACKENDS)("every Managed operation answers as the SDK declares, on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  // Answers no request: a dream on its model stays in flight until it is canceled.
  let held: FakeModelServer | undefined;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    held = await startFakeOpenAI();
    held.setFallback({ kind: "hang" });
    const env = { OPENAI_API_KEY: "census", OPENAI_BASE_URL: held.url };
    t = await startTestServer({ env, ...(schema ? { databaseUrl: schema.url } : {}) });
  });
  afterAll(async () => {
    await t?.close();
    await held?.close();
    await schema?.drop();
  });

  it("serves all of them", async (ctx) => {
    if (unavailable || !t) return ctx.skip(unavailable ?? "no server");
    const census = new CensusRecorder(surface);
    const run: scenario.ScenarioContext = {
      server: t,
      client: census.watch(t.client),
      census,
      heldModel: HELD_MODEL,
    };

    const { agentId, environmentId } = await scenario.agentsAndEnvironments(run);
    await scenario.sessions(run, environmentId);
    await scenario.sessionResources(run, agentId, environmentId);
    await scenario.selfHostedWork(run);
    await scenario.filesAndSkills(run);
    await scenario.memoryStores(run);
    await scenario.vaults(run);
    await scenario.models(run);
    await scenario.deployments(run, agentId, environmentId);
    await scenario.dreams(run, agentId, environmentId);
    await scenario.tunnels(run);
    await scenario.userProfiles(run);
    await scenario.webhookEndpoints(run);
    await census.settled();

    const unserved: string[] = [];
    const mismatched: string[] = [];
    for (const op of surface.operations) {
      const record = census.records.get(op.path);
      const answered = (record?.answered ?? 0) > 0;
      // A page or a stream proves its item type only with an item in it.
      const checked = op.kind === "bytes" || (record?.checked ?? 0) > 0;
      if (!answered || !checked)
        unserved.push(`${op.path} (${answered ? "answered, nothing to check" : "never answered"})`);
      for (const mismatch of record?.mismatches ?? [])
        mismatched.push(`${op.path} → ${op.typeName}: ${mismatch}`);
    }
    expect(mismatched, "answers that differ from the SDK's declared types").toEqual([]);
    expect(unserved, "operations the census could not see served").toEqual([]);
  }, 180_000);
});
