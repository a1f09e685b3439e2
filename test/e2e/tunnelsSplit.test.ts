/**
 * MCP tunnels in the split deployment (real `awaken control` and `awaken coordinator` processes on
 * PostgreSQL): the Coordinator holds no master key, so a tunnel's token is sealed and opened by
 * Control over the private link, with a sealer that takes `tunnel:` identities only. The token is
 * in neither process's output nor, in plaintext, in the Coordinator's database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUnavailable, testDatabaseUrl } from "../support/postgresFixtures.js";
import { type SplitCluster, startSplitCluster } from "../support/splitCluster.js";

const KEY = "sk-awaken-split-tunnels-key";

describe.skipIf(postgresUnavailable() !== null)("MCP tunnel tokens in the split deployment", () => {
  let dataDir: string;
  let cluster: SplitCluster;
  let client: Anthropic;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-split-tunnels-"));
    cluster = await startSplitCluster({ dataDir, apiKey: KEY, coordinatorArgs: ["--workers", "0"] });
    client = cluster.coordinator!.client;
  }, 60_000);

  afterAll(async () => {
    await cluster?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a token is sealed and revealed by Control over the link, rotated, and kept only sealed and hashed", async () => {
    const tunnel = await client.beta.tunnels.create({ display_name: "split" });
    const first = await client.beta.tunnels.revealToken(tunnel.id);
    expect(await client.beta.tunnels.revealToken(tunnel.id)).toEqual(first);
    const second = await client.beta.tunnels.rotateToken(tunnel.id, { reason: "split test" });
    expect(await client.beta.tunnels.revealToken(tunnel.id)).toEqual(second);
    expect(second.tunnel_token).not.toBe(first.tunnel_token);

    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      const schema = pg.escapeIdentifier(cluster.coordinatorSchema.schema);
      const { rows } = await db.query(`select * from ${schema}.tunnels where id = $1`, [tunnel.id]);
      expect(rows).toEqual([
        expect.objectContaining({
          token_id: second.id,
          token_sealed: expect.stringMatching(/^sealed1:/),
          token_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      ]);
      expect(JSON.stringify(rows)).not.toContain(second.tunnel_token);
    } finally {
      await db.end();
    }
    for (const process of [cluster.control, cluster.coordinator!]) {
      for (const output of [process.stdout(), process.stderr()]) {
        expect(output).not.toContain(first.tunnel_token);
        expect(output).not.toContain(second.tunnel_token);
      }
    }
  });
});
