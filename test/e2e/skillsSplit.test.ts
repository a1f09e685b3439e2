/**
 * Skills in the split deployment (real `awaken control` and `awaken coordinator` processes on
 * PostgreSQL, each in its own schema): skills are stored with the Coordinator's resources, and
 * Control pins an agent's custom skills through the Coordinator over the private link, so
 * publication answers exactly as in one process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { BAD_REQUEST, expectApiError, MODEL } from "../support/sdkHelpers.js";
import { type SplitCluster, startSplitCluster } from "../support/splitCluster.js";

const KEY = "sk-awaken-split-skills-key";

describe.skipIf(postgresUnavailable() !== null)("skills in the split deployment", () => {
  let dataDir: string;
  let cluster: SplitCluster;
  let client: Anthropic;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-split-skills-"));
    cluster = await startSplitCluster({ dataDir, apiKey: KEY, coordinatorArgs: ["--workers", "0"] });
    client = cluster.coordinator!.client;
  }, 60_000);

  afterAll(async () => {
    await cluster?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("Control pins the newest version through the Coordinator; an unknown skill is a 400 naming it", async () => {
    const files = [
      await toFile(Buffer.from("---\nname: split-skill\ndescription: d\n---\n"), "split-skill/SKILL.md"),
    ];
    const skill = await client.beta.skills.create({ files });
    const agent = await client.beta.agents.create({
      name: "split",
      model: MODEL,
      skills: [{ type: "custom", skill_id: skill.id }],
    });
    expect(agent.skills).toEqual([{ type: "custom", skill_id: skill.id, version: skill.latest_version_id }]);
    await expectApiError(
      client.beta.agents.create({
        name: "split",
        model: MODEL,
        skills: [{ type: "custom", skill_id: "skill_nope" }],
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/custom skill "skill_nope" was not found in this workspace/] },
    );
  });
});
