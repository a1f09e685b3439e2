/**
 * User profiles in the split deployment (real `awaken control` and `awaken coordinator` processes on
 * PostgreSQL): the profiles are Control's, so the coordinator forwards every operation over the
 * private link and a client keeps the coordinator's one base URL; Control's own door serves the
 * same profiles, but refuses a delete (the erasure it does is the coordinator's). A session created
 * at the coordinator with the header is attributed through the link's check.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { all, BAD_REQUEST, expectApiError, MODEL, NOT_FOUND } from "../support/sdkHelpers.js";
import { type SplitCluster, startSplitCluster } from "../support/splitCluster.js";

const KEY = "sk-awaken-split-profiles-key";

describe.skipIf(postgresUnavailable() !== null)("user profiles in the split deployment", () => {
  let dataDir: string;
  let cluster: SplitCluster;
  let client: Anthropic;
  let door: Anthropic;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-split-profiles-"));
    cluster = await startSplitCluster({ dataDir, apiKey: KEY, coordinatorArgs: ["--workers", "0"] });
    client = cluster.coordinator!.client;
    door = new Anthropic({ baseURL: cluster.control.apiUrl!, apiKey: KEY, maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await cluster?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("every operation answers through the coordinator's base URL, and Control's door reads the same profiles", async () => {
    const created = await client.userProfiles.create({ name: "Split Co", metadata: { k: "v" } });
    expect(await door.userProfiles.retrieve(created.id)).toEqual(created);
    const updated = await door.userProfiles.update(created.id, { metadata: { k2: "v2" } });
    expect(await client.userProfiles.retrieve(created.id)).toEqual(updated);
    expect((await all(client.userProfiles.list())).map((p) => p.id)).toContain(created.id);
    const beta = await client.beta.userProfiles.retrieve(created.id);
    expect(beta).toMatchObject({ id: created.id, trust_grants: {}, external_id: null });

    // URLs land on the origin the client called.
    const action = await client.userProfiles.actionURLs.create(created.id, {
      action: { type: "enroll_end_user" },
    });
    expect(action.url.startsWith(`${cluster.coordinator!.url}/awaken/user_profile_action?token=`)).toBe(true);
    const enrollment = await door.beta.userProfiles.createEnrollmentURL(created.id);
    expect(enrollment.url.startsWith(`${cluster.control.apiUrl}/awaken/user_profile_action?token=`)).toBe(
      true,
    );
    const controls = await client.beta.userProfiles.providers.google.dataControls.update(created.id, {
      cmek: { type: "enabled", external_key_ids: { eu: "ekey_split1" } },
    });
    expect(await door.beta.userProfiles.providers.google.dataControls.retrieve(created.id)).toEqual(controls);

    // Attribution at the coordinator is checked against Control's profiles.
    const agent = await client.beta.agents.create({ name: "split-profiles", model: MODEL });
    const environment = await client.beta.environments.create({ name: "split-profiles" });
    const as = { headers: { "anthropic-user-profile-id": created.id } };
    const session = await client.beta.sessions.create(
      { agent: agent.id, environment_id: environment.id },
      as,
    );
    expect((session as unknown as Record<string, unknown>).awaken_user_profile_id).toBe(created.id);

    // Control's door holds no captured content to erase: it refuses the delete, which the coordinator does.
    await expectApiError(door.userProfiles.delete(created.id), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: ["coordinator"],
    });
    expect(await client.userProfiles.delete(created.id)).toEqual({
      id: created.id,
      type: "user_profile_deleted",
    });
    await expectApiError(door.userProfiles.retrieve(created.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(
      client.beta.sessions.create({ agent: agent.id, environment_id: environment.id }, as),
      Anthropic.UserProfileNotFoundError,
      BAD_REQUEST,
    );
  });
});
