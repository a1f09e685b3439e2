import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type { BetaManagedAgentsAgent } from "@anthropic-ai/sdk/resources/beta/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { BAD_REQUEST, expectApiError, MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// An agent's custom skills are pinned to exact versions when it is published (created, updated,
// or overridden for one session): a session never resolves "latest" when it runs.

const BACKENDS = [
  { name: "SQLite", unavailable: () => null, databaseUrl: async () => undefined },
  {
    name: "PostgreSQL",
    unavailable: postgresUnavailable,
    databaseUrl: async () => {
      const schema = await emptySchema();
      drops.push(() => schema.drop());
      return schema.url;
    },
  },
] as const;
const drops: Array<() => Promise<void>> = [];

const files = async (description: string) => [
  await toFile(
    Buffer.from(`---\nname: report-writer\ndescription: ${description}\n---\nWrite reports.\n`),
    "report-writer/SKILL.md",
  ),
];

for (const backend of BACKENDS) {
  describe.skipIf(backend.unavailable() !== null)(`skills pinned at publication on ${backend.name}`, () => {
    let t: TestServer;
    let client: Anthropic;
    beforeAll(async () => {
      t = await startTestServer({ databaseUrl: await backend.databaseUrl(), allowWeakerTiers: true });
      client = t.client;
    });
    afterAll(async () => {
      await t?.close();
      for (const drop of drops.splice(0)) await drop();
    });

    it("omitted or latest pins the newest version at publication; an explicit version is kept", async () => {
      const skill = await client.beta.skills.create({ files: await files("v1") });
      const v1 = skill.latest_version_id;
      const agent: BetaManagedAgentsAgent = await client.beta.agents.create({
        name: "pinned",
        model: MODEL,
        skills: [{ type: "custom", skill_id: skill.id }],
      });
      expect(agent.skills).toEqual([{ type: "custom", skill_id: skill.id, version: v1 }]);

      // A newer version does not move what was published.
      const v2 = (await client.beta.skills.versions.create(skill.id, { files: await files("v2") })).id;
      expect((await client.beta.agents.retrieve(agent.id)).skills).toEqual([
        { type: "custom", skill_id: skill.id, version: v1 },
      ]);

      // Publishing again with "latest" pins the newest now; an explicit older version stays exact.
      const updated = await client.beta.agents.update(agent.id, {
        version: agent.version,
        skills: [{ type: "custom", skill_id: skill.id, version: "latest" }],
      });
      expect(updated.version).toBe(agent.version + 1);
      expect(updated.skills).toEqual([{ type: "custom", skill_id: skill.id, version: v2 }]);
      const exact = await client.beta.agents.create({
        name: "exact",
        model: MODEL,
        skills: [{ type: "custom", skill_id: skill.id, version: v1 }],
      });
      expect(exact.skills).toEqual([{ type: "custom", skill_id: skill.id, version: v1 }]);

      // An update that leaves skills out keeps the pins as they were.
      const renamed = await client.beta.agents.update(agent.id, {
        version: updated.version,
        name: "renamed",
      });
      expect(renamed.skills).toEqual(updated.skills);

      // A session overriding the agent's skills pins them at its creation too.
      // A session of an agent with skills needs its sandbox from the start (eager provisioning).
      const environment = await client.beta.environments.create({
        name: "pinning",
        config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
      });
      const v3 = (await client.beta.skills.versions.create(skill.id, { files: await files("v3") })).id;
      const session = await client.beta.sessions.create({
        environment_id: environment.id,
        agent: {
          type: "agent_with_overrides",
          id: exact.id,
          skills: [{ type: "custom", skill_id: skill.id }],
        },
      });
      expect(session.agent.skills).toEqual([{ type: "custom", skill_id: skill.id, version: v3 }]);
    });

    it("refuses an unknown skill, an unknown version, another workspace's skill and a duplicate, naming it", async () => {
      const skill = await client.beta.skills.create({ files: await files("d") });
      const refusals: Array<[Array<{ type: "custom"; skill_id: string; version?: string }>, RegExp]> = [
        [
          [{ type: "custom", skill_id: "skill_nope" }],
          /custom skill "skill_nope" was not found in this workspace/,
        ],
        [
          [{ type: "custom", skill_id: skill.id, version: "skillver_nope" }],
          /has no version "skillver_nope"/,
        ],
        [
          [
            { type: "custom", skill_id: skill.id },
            { type: "custom", skill_id: skill.id },
          ],
          /is listed twice/,
        ],
      ];
      for (const [skills, message] of refusals) {
        await expectApiError(
          client.beta.agents.create({ name: "x", model: MODEL, skills }),
          Anthropic.BadRequestError,
          {
            ...BAD_REQUEST,
            message: [message],
          },
        );
      }
      const team = new Anthropic({
        apiKey: await mintAdmin(t, "wrkspc_pin-b"),
        baseURL: t.server.url,
        maxRetries: 0,
      });
      await expectApiError(
        team.beta.agents.create({
          name: "x",
          model: MODEL,
          skills: [{ type: "custom", skill_id: skill.id }],
        }),
        Anthropic.BadRequestError,
        {
          ...BAD_REQUEST,
          message: [new RegExp(`custom skill "${skill.id}" was not found in this workspace`)],
        },
      );
      // Nothing was published by the refusals.
      expect((await client.beta.agents.list()).data.map((a) => a.name)).not.toContain("x");
    });
  });
}

async function mintAdmin(t: TestServer, workspaceId: string): Promise<string> {
  const response = await fetch(`${t.server.url}/v1/awaken/api_keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ role: "admin", workspace_id: workspaceId }),
  });
  const body = (await response.json()) as { key?: string };
  if (response.status !== 200 || !body.key) throw new Error(`could not mint a key: ${JSON.stringify(body)}`);
  return body.key;
}
