/**
 * Repository tokens in the split deployment (real `awaken control` and `awaken coordinator`
 * processes on PostgreSQL): the Coordinator holds no master key, so a session resource's token is
 * sealed by Control over the private link, with a sealer that takes `repo:` identities only. The
 * token is in neither process's output nor, in plaintext, in the Coordinator's database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import type { BetaManagedAgentsGitHubRepositoryResource } from "@anthropic-ai/sdk/resources/beta/sessions/resources";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUnavailable, testDatabaseUrl } from "../support/postgresFixtures.js";
import { MODEL } from "../support/sdkHelpers.js";
import { type SplitCluster, startSplitCluster } from "../support/splitCluster.js";
import { plantedSecret } from "../support/vaultServer.js";

const KEY = "sk-awaken-split-sesrsc-key";
const REPO = "https://140.82.112.3/acme/widgets.git";

describe.skipIf(postgresUnavailable() !== null)("session repository tokens in the split deployment", () => {
  let dataDir: string;
  let cluster: SplitCluster;
  let client: Anthropic;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-split-sesrsc-"));
    cluster = await startSplitCluster({ dataDir, apiKey: KEY, coordinatorArgs: ["--workers", "0"] });
    client = cluster.coordinator!.client;
  }, 60_000);

  afterAll(async () => {
    await cluster?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a token is sealed by Control over the link, rotated, and never shown", async () => {
    const first = plantedSecret("split-first");
    const second = plantedSecret("split-second");
    const agent = await client.beta.agents.create({ name: "split", model: MODEL });
    const environment = await client.beta.environments.create({
      name: "split",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      resources: [{ type: "github_repository", url: REPO, authorization_token: first }],
    });
    const repo = session.resources[0] as BetaManagedAgentsGitHubRepositoryResource;
    expect(repo).toMatchObject({ type: "github_repository", url: REPO, mount_path: "/workspace/widgets" });
    const rotated = await client.beta.sessions.resources.update(repo.id, {
      session_id: session.id,
      authorization_token: second,
    });
    expect(JSON.stringify([session, rotated])).not.toMatch(/planted-split/);

    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      const { rows } = await db.query(
        `select token_sealed, token_revision from ${pg.escapeIdentifier(cluster.coordinatorSchema.schema)}.session_resources where id = $1`,
        [repo.id],
      );
      expect(rows).toEqual([{ token_sealed: expect.stringMatching(/^sealed1:/), token_revision: 2 }]);
    } finally {
      await db.end();
    }
    for (const process of [cluster.control, cluster.coordinator!]) {
      for (const output of [process.stdout(), process.stderr()]) {
        expect(output).not.toContain(first);
        expect(output).not.toContain(second);
      }
    }
  });
});
