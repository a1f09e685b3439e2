/**
 * User profiles through the official SDK over real HTTP, on SQLite and PostgreSQL: all 15
 * operations of the GA (`client.userProfiles`) and beta (`client.beta.userProfiles`) clients, each
 * answer holding exactly the fields the SDK's declared type gives it on that wire; bad inputs
 * refused with a clear 4xx and nothing written; cursor pagination by creation and by name; a
 * session attributed to a profile by the `anthropic-user-profile-id` header (an unknown, foreign or
 * deleted profile refused); usage per profile on the workspace usage route; and a profile's delete
 * erasing its captured content.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { BetaUserProfileActionURL } from "@anthropic-ai/sdk/resources/beta/user-profiles/action-urls";
import type { BetaGoogleManagedDataControls } from "@anthropic-ai/sdk/resources/beta/user-profiles/providers/google/data-controls";
import type {
  BetaDeletedUserProfile,
  BetaUserProfile,
  BetaUserProfileEnrollmentURL,
} from "@anthropic-ai/sdk/resources/beta/user-profiles/user-profiles";
import type { UserProfileActionURL } from "@anthropic-ai/sdk/resources/user-profiles/action-urls";
import type {
  DeletedUserProfile,
  UserProfile,
} from "@anthropic-ai/sdk/resources/user-profiles/user-profiles";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  BAD_REQUEST,
  expectApiError,
  history,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  RFC3339,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** Every field of each declared type, so a missing or extra field in an answer fails (TS checks the lists). */
const GA_FIELDS = Object.keys({
  id: 1,
  type: 1,
  access_type: 1,
  created_at: 1,
  updated_at: 1,
  enforcement_actions: 1,
  enforcement_status: 1,
  external_user_details: 1,
  metadata: 1,
  name: 1,
  programs: 1,
} satisfies Record<keyof UserProfile, 1>).sort();
/** The beta client sends `user-profiles-2026-08-18`: the legacy fields, no details object (SDK). */
const BETA_FIELDS = Object.keys({
  id: 1,
  type: 1,
  access_type: 1,
  created_at: 1,
  updated_at: 1,
  metadata: 1,
  name: 1,
  trust_grants: 1,
  external_id: 1,
  external_user_onboarded_at: 1,
} satisfies Omit<Record<keyof BetaUserProfile, 1>, "external_user_details">).sort();
const DETAIL_FIELDS = [
  "account_status",
  "country",
  "email_hash",
  "entity_type",
  "name_hash",
  "onboarded_at",
  "reference_id",
];

function expectGa(p: UserProfile): UserProfile {
  expect(Object.keys(p).sort()).toEqual(GA_FIELDS);
  expect(Object.keys(p.external_user_details).sort()).toEqual(DETAIL_FIELDS);
  expect(p).toMatchObject({
    type: "user_profile",
    enforcement_actions: [],
    enforcement_status: "unrestricted",
  });
  expect(p.programs).toEqual({ cyber: null, efs: null });
  expect(p.id).toMatch(/^uprof_/);
  expect(p.created_at).toMatch(RFC3339);
  expect(p.updated_at).toMatch(RFC3339);
  return p;
}

function expectBeta(p: BetaUserProfile): BetaUserProfile {
  expect(Object.keys(p).sort()).toEqual(BETA_FIELDS);
  expect(p).toMatchObject({ type: "user_profile", trust_grants: {} });
  return p;
}

const BACKENDS = ["SQLite", "PostgreSQL"] as const;

describe.each(BACKENDS)("user profiles over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer({ workerPollMs: 50, ...(schema ? { databaseUrl: schema.url } : {}) });
    client = t.client;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${t?.server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_API_KEY}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }
  /** The tables holding `needle` in any column of any row (every table of the server's database). */
  async function tablesHolding(needle: string): Promise<string[]> {
    const found = new Set<string>();
    if (schema) {
      const db = new pg.Client({ connectionString: schema.url });
      await db.connect();
      try {
        const { rows: tables } = await db.query<{ name: string }>(
          "select table_name as name from information_schema.tables where table_schema = $1",
          [schema.schema],
        );
        for (const { name } of tables) {
          const { rows } = await db.query(`select * from ${pg.escapeIdentifier(name)}`);
          if (rows.some((row) => JSON.stringify(row).includes(needle))) found.add(name);
        }
      } finally {
        await db.end();
      }
    } else {
      const db = new SqliteDatabase(join(t?.dataDir ?? "", "awaken.db"), { readonly: true });
      try {
        const tables = db
          .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
          .all() as Array<{ name: string }>;
        for (const { name } of tables)
          if (
            (db.prepare(`select * from "${name}"`).all() as unknown[]).some((r) =>
              JSON.stringify(r).includes(needle),
            )
          )
            found.add(name);
      } finally {
        db.close();
      }
    }
    return [...found].sort();
  }
  const countProfiles = async () => (await all(client.userProfiles.list({ limit: 100 }))).length;

  it("GA: create, retrieve, update, list, action URL, delete — each answer of the declared type", async () => {
    const created = expectGa(
      await client.userProfiles.create({
        name: "Acme Corp",
        access_type: "passthrough",
        metadata: { tier: "gold", region: "eu" },
        external_user_details: {
          country: "DE",
          reference_id: "acct-42",
          entity_type: "business",
          onboarded_at: "2026-01-02T03:04:05Z",
          account_status: "active",
        },
      }),
    );
    expect(created).toMatchObject({
      name: "Acme Corp",
      access_type: "passthrough",
      metadata: { tier: "gold", region: "eu" },
    });
    expect(created.external_user_details).toEqual({
      account_status: "active",
      country: "DE",
      email_hash: null,
      entity_type: "business",
      name_hash: null,
      onboarded_at: "2026-01-02T03:04:05.000Z",
      reference_id: "acct-42",
    });
    const bare = expectGa(await client.userProfiles.create({}));
    expect(bare).toMatchObject({ name: null, access_type: "application", metadata: {} });
    expect(Object.values(bare.external_user_details).every((v) => v === null)).toBe(true);

    expect(expectGa(await client.userProfiles.retrieve(created.id))).toEqual(created);

    // Metadata merges ("" removes a key); a details field sent replaces, the rest stay.
    const updated = expectGa(
      await client.userProfiles.update(created.id, {
        metadata: { region: "", plan: "pro" },
        external_user_details: { email_hash: "h1" },
        name: null,
      }),
    );
    expect(updated.metadata).toEqual({ tier: "gold", plan: "pro" });
    expect(updated.name).toBeNull();
    expect(updated.external_user_details).toMatchObject({
      email_hash: "h1",
      country: "DE",
      reference_id: "acct-42",
    });
    expect(updated.access_type).toBe("passthrough");

    const listed = await all(client.userProfiles.list());
    expect(listed.map((p) => p.id)).toEqual(expect.arrayContaining([created.id, bare.id]));
    for (const p of listed) expectGa(p);
    // Every profile here is unrestricted: a filter without that value matches none.
    expect((await client.userProfiles.list({ enforcement_status: ["banned"] })).data).toEqual([]);
    expect(
      (await client.userProfiles.list({ enforcement_status: ["unrestricted"], limit: 100 })).data.length,
    ).toBe(listed.length);

    const action: UserProfileActionURL = await client.userProfiles.actionURLs.create(created.id, {
      action: { type: "enroll_end_user" },
    });
    expect(Object.keys(action).sort()).toEqual(["expires_at", "type", "url"]);
    expect(action.type).toBe("user_profile_action_url");
    expect(action.url.startsWith(`${t?.server.url}/awaken/user_profile_action?token=upa_`)).toBe(true);
    expect(action.expires_at).toMatch(RFC3339);
    const lifetime = Date.parse(action.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(0);
    expect(lifetime).toBeLessThanOrEqual(15 * 60 * 1000);
    // Anyone holding the URL opens it, without a key; it says there is nothing to do here.
    const opened = await fetch(action.url);
    expect(opened.status).toBe(200);
    expect(await opened.json()).toMatchObject({
      type: "user_profile_action",
      action: "enroll_end_user",
      user_profile_id: created.id,
      status: "not_available",
    });
    const forged = `${action.url.slice(0, -4)}AAAA`;
    expect((await fetch(forged)).status).toBe(404);

    const deleted: DeletedUserProfile = await client.userProfiles.delete(bare.id);
    expect(deleted).toEqual({ id: bare.id, type: "user_profile_deleted" });
    await expectApiError(client.userProfiles.retrieve(bare.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.userProfiles.delete(bare.id), Anthropic.NotFoundError, NOT_FOUND);
    expect((await all(client.userProfiles.list({ limit: 100 }))).map((p) => p.id)).not.toContain(bare.id);

    // The admin audit records each authored change.
    const audit = await call("GET", "/v1/awaken/audit?resource_type=user_profile&limit=100");
    expect(audit.status).toBe(200);
    const actions = (audit.json.data as Array<{ action: string; resource_id: string }>)
      .filter((e) => e.resource_id === created.id || e.resource_id === bare.id)
      .map((e) => `${e.action}:${e.resource_id === created.id ? "created" : "bare"}`)
      .sort();
    expect(actions).toEqual(["create:bare", "create:created", "delete:bare", "update:created"]);
  });

  it("beta: the same profiles on the legacy wire, enrollment URL, action URL and Google data controls", async () => {
    const created = expectBeta(
      await client.beta.userProfiles.create({
        name: "Jo",
        external_id: "user-7",
        external_user_onboarded_at: "2026-03-01T00:00:00Z",
        metadata: { a: "1" },
      }),
    );
    expect(created).toMatchObject({
      name: "Jo",
      external_id: "user-7",
      external_user_onboarded_at: "2026-03-01T00:00:00.000Z",
      access_type: "application",
    });
    expect(expectBeta(await client.beta.userProfiles.retrieve(created.id))).toEqual(created);
    // The GA wire reads the same profile: external_id is the details' reference_id.
    expect((await client.userProfiles.retrieve(created.id)).external_user_details).toMatchObject({
      reference_id: "user-7",
      onboarded_at: "2026-03-01T00:00:00.000Z",
    });
    const updated = expectBeta(await client.beta.userProfiles.update(created.id, { external_id: "user-8" }));
    expect(updated.external_id).toBe("user-8");
    const listed = await all(client.beta.userProfiles.list());
    expect(listed.map((p) => p.id)).toContain(created.id);
    for (const p of listed) expectBeta(p);

    const enrollment: BetaUserProfileEnrollmentURL = await client.beta.userProfiles.createEnrollmentURL(
      created.id,
    );
    expect(Object.keys(enrollment).sort()).toEqual(["expires_at", "type", "url"]);
    expect(enrollment.type).toBe("enrollment_url");
    expect(enrollment.url.startsWith(`${t?.server.url}/awaken/user_profile_action?token=`)).toBe(true);
    expect(enrollment.expires_at).toMatch(RFC3339);
    const action: BetaUserProfileActionURL = await client.beta.userProfiles.actionURLs.create(created.id, {
      action: { type: "enroll_end_user" },
    });
    expect(action.type).toBe("user_profile_action_url");

    const controls: BetaGoogleManagedDataControls =
      await client.beta.userProfiles.providers.google.dataControls.retrieve(created.id);
    expect(controls).toMatchObject({
      type: "google_managed_data_controls",
      user_profile_id: created.id,
      cmek: { type: "disabled", retired_keys: [] },
      storage: { type: "disabled", retired_buckets: [] },
    });
    expect(controls.bucket_label_value).toMatch(/^uprof_/);
    const set = await client.beta.userProfiles.providers.google.dataControls.update(created.id, {
      cmek: { type: "enabled", external_key_ids: { us: "ekey_abc123" } },
      storage: { type: "enabled", buckets: { eu: { project_number: "1234", bucket_name: "acme-eu" } } },
    });
    // Recorded, never applied: every configured region reads `suspended`.
    expect(set.cmek).toEqual({
      type: "enabled",
      external_key_ids: { us: "ekey_abc123" },
      status: { us: { type: "suspended", effective_external_key_id: null } },
      retired_keys: [],
    });
    expect(set.storage).toMatchObject({
      type: "enabled",
      buckets: { eu: { bucket_name: "acme-eu", project_number: "1234" } },
      status: { eu: { type: "suspended", effective_bucket: null } },
    });
    expect(set.bucket_label_value).toBe(controls.bucket_label_value);
    expect(await client.beta.userProfiles.providers.google.dataControls.retrieve(created.id)).toEqual(set);
    // An empty update (the SDK's own example) changes nothing.
    expect(await client.beta.userProfiles.providers.google.dataControls.update(created.id, {})).toEqual(set);
    // Removing the only key of an enabled control is refused; so is a malformed key.
    await expectApiError(
      client.beta.userProfiles.providers.google.dataControls.update(created.id, {
        cmek: { type: "enabled", external_key_ids: { us: null } },
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["at least one region"] },
    );
    await expectApiError(
      client.beta.userProfiles.providers.google.dataControls.update(created.id, {
        cmek: { type: "enabled", external_key_ids: { us: "not a key" } },
      }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    expect(await client.beta.userProfiles.providers.google.dataControls.retrieve(created.id)).toEqual(set);

    const deleted: BetaDeletedUserProfile = await client.beta.userProfiles.delete(created.id);
    expect(deleted).toEqual({ id: created.id, type: "user_profile_deleted" });
    await expectApiError(client.beta.userProfiles.retrieve(created.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(
      client.beta.userProfiles.createEnrollmentURL(created.id),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    // A deleted profile's links stop working.
    expect((await fetch(enrollment.url)).status).toBe(404);
  });

  it("refuses bad inputs with a clear 4xx and writes nothing", async () => {
    const before = await countProfiles();
    const bad = (body: Record<string, unknown>, message: Array<string | RegExp>) =>
      expectApiError(client.userProfiles.create(body as never), Anthropic.BadRequestError, {
        ...BAD_REQUEST,
        message,
      });
    await bad({ nickname: "x" }, ["nickname"]);
    await bad({ name: "n".repeat(256) }, ["name"]);
    await bad({ access_type: "reseller" }, ["access_type"]);
    await bad({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, [
      "16 keys",
    ]);
    await bad({ metadata: { empty: "" } }, ["non-empty"]);
    await bad({ external_user_details: { country: "de" } }, ["country"]);
    await bad({ external_user_details: { email_hash: "" } }, ["email_hash"]);
    await bad({ external_user_details: { onboarded_at: "yesterday" } }, ["onboarded_at"]);
    await bad({ external_user_details: { onboarded_at: new Date(Date.now() + 3_600_000).toISOString() } }, [
      "future",
    ]);
    // The legacy field is for the legacy beta wire only; the details object for the others (SDK).
    await bad({ external_id: "x" }, ["external_id"]);
    await expectApiError(
      client.beta.userProfiles.create({ external_user_details: { country: "US" } } as never),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["external_user_details"] },
    );
    await expectApiError(
      client.beta.userProfiles.list({ enforcement_status: ["banned"] } as never),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.userProfiles.list({ order_by: "email" as never }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.userProfiles.list({ page: "forged" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    expect(await countProfiles()).toBe(before);

    const p = await client.userProfiles.create({ external_user_details: { country: "FR" } });
    // Update: a details value cannot be cleared (null refused); nothing changes.
    await expectApiError(
      client.userProfiles.update(p.id, { external_user_details: { country: null } }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.userProfiles.actionURLs.create(p.id, { action: { type: "verify" as never } }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["action type"] },
    );
    expect(await client.userProfiles.retrieve(p.id)).toEqual(p);
    for (const id of ["uprof_unknown000000000000000000", "../etc", "sesn_x"]) {
      await expectApiError(client.userProfiles.retrieve(id), Anthropic.NotFoundError, NOT_FOUND);
    }
  });

  it("pages with a cursor, by creation and by name (named first, ASCII case ignored)", async () => {
    const mark = randomBytes(4).toString("hex");
    const made = [];
    for (const name of [`b-${mark}`, `A-${mark}`, null, `c-${mark}`]) {
      made.push(await client.userProfiles.create({ name, metadata: { mark } }));
    }
    const mine = (list: UserProfile[]) => list.filter((p) => p.metadata.mark === mark).map((p) => p.name);
    const byCreation = await all(client.userProfiles.list({ limit: 1, order: "asc" }));
    expect(mine(byCreation)).toEqual([`b-${mark}`, `A-${mark}`, null, `c-${mark}`]);
    const newest = await all(client.userProfiles.list({ limit: 2 }));
    expect(mine(newest)).toEqual([`c-${mark}`, null, `A-${mark}`, `b-${mark}`]);
    const byName = await all(client.userProfiles.list({ limit: 1, order_by: "name", order: "asc" }));
    const names = mine(byName);
    expect(names).toEqual([`A-${mark}`, `b-${mark}`, `c-${mark}`, null]);
    const byNameDesc = await all(client.userProfiles.list({ limit: 1, order_by: "name" }));
    expect(mine(byNameDesc)).toEqual([`c-${mark}`, `b-${mark}`, `A-${mark}`, null]);
    // Unnamed profiles come last in either direction.
    const descAll = byNameDesc.map((p) => p.name);
    expect(descAll.indexOf(null)).toBeGreaterThan(descAll.lastIndexOf(`A-${mark}`));
  });

  it("attributes a session to the profile the header names, counts its usage, and erases its content on delete", async () => {
    const planted = `planted-${randomBytes(8).toString("hex")}`;
    const profile = await client.userProfiles.create({
      name: `Erin ${planted}`,
      metadata: { note: planted },
      external_user_details: { reference_id: planted },
    });
    const other = await client.userProfiles.create({ name: "Other" });
    const agent = await client.beta.agents.create({ name: "profiles", model: MODEL });
    const environment = await client.beta.environments.create({ name: "profiles" });
    const as = (id: string) => ({ headers: { "anthropic-user-profile-id": id } });
    const sessionCount = async () => (await all(client.beta.sessions.list({ limit: 100 }))).length;

    // Unknown, malformed, or another workspace's profile: refused, no session made.
    const before = await sessionCount();
    const refused = await expectApiError(
      client.beta.sessions.create(
        { agent: agent.id, environment_id: environment.id },
        as("uprof_0000000000000000000000000"),
      ),
      Anthropic.UserProfileNotFoundError,
      { ...BAD_REQUEST, message: ["user profile"] },
    );
    expect(refused.errorCode).toBe("user_profile_not_found");
    await expectApiError(
      client.beta.sessions.create({ agent: agent.id, environment_id: environment.id }, as("x".repeat(200))),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["anthropic-user-profile-id"] },
    );
    const foreignKey = await call("POST", "/v1/awaken/api_keys", {
      role: "admin",
      workspace_id: "wrkspc_uprof-other",
    });
    const foreign = new Anthropic({
      apiKey: foreignKey.json.key as string,
      baseURL: t?.server.url,
      maxRetries: 0,
    });
    const foreignAgent = await foreign.beta.agents.create({ name: "x", model: MODEL });
    const foreignEnv = await foreign.beta.environments.create({ name: "x" });
    await expectApiError(
      foreign.beta.sessions.create({ agent: foreignAgent.id, environment_id: foreignEnv.id }, as(profile.id)),
      Anthropic.UserProfileNotFoundError,
      BAD_REQUEST,
    );
    await expectApiError(foreign.userProfiles.retrieve(profile.id), Anthropic.NotFoundError, NOT_FOUND);
    // A subject named in metadata must be the profile's own.
    await expectApiError(
      client.beta.sessions.create(
        {
          agent: agent.id,
          environment_id: environment.id,
          metadata: { awaken_data_subject: "someone-else" },
        },
        as(profile.id),
      ),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["awaken_data_subject"] },
    );
    expect(await sessionCount()).toBe(before);

    const session = await client.beta.sessions.create(
      { agent: agent.id, environment_id: environment.id, title: `about ${planted}` },
      as(profile.id),
    );
    expect((session as unknown as Record<string, unknown>).awaken_user_profile_id).toBe(profile.id);
    const retrieved = await client.beta.sessions.retrieve(session.id);
    expect((retrieved as unknown as Record<string, unknown>).awaken_user_profile_id).toBe(profile.id);
    // A send naming the session's profile goes through; naming another is refused.
    await client.beta.sessions.events.send(
      session.id,
      { events: [userMessage(`my secret is ${planted}`)] },
      as(profile.id),
    );
    await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
    await expectApiError(
      client.beta.sessions.events.send(session.id, { events: [userMessage("x")] }, as(other.id)),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["another user profile"] },
    );
    // A session of no profile, for the breakdown's contrast.
    const plain = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    expect((plain as unknown as Record<string, unknown>).awaken_user_profile_id).toBeUndefined();

    // Usage per profile: this profile's turn is counted under it; the other profile has none.
    const usage = await call("GET", "/v1/awaken/usage?days=1");
    expect(usage.status).toBe(200);
    const perProfile = usage.json.user_profiles as Array<{ user_profile_id: string; tokens: number }>;
    const mine = perProfile.find((u) => u.user_profile_id === profile.id);
    expect(mine?.tokens).toBeGreaterThan(0);
    expect(mine).toMatchObject({ list_cost: expect.objectContaining({ currency: "USD" }) });
    expect(perProfile.some((u) => u.user_profile_id === other.id)).toBe(false);

    // Consent is recorded for the profile as a data subject.
    const consent = await call(
      "PUT",
      `/v1/awaken/data_subjects/${profile.id}/consents/content_capture_telemetry`,
      {
        granted: true,
      },
    );
    expect(consent.status).toBe(200);

    // Delete: the profile's captured content is erased, then the profile is gone.
    expect(JSON.stringify(await history(client, session.id))).toContain(planted);
    expect(await tablesHolding(planted)).toEqual(
      expect.arrayContaining(["commits", "sessions", "user_profiles"]),
    );
    await client.userProfiles.delete(profile.id);
    // No table keeps the profile's details or its sessions' content: tombstones stand in their place.
    expect(await tablesHolding(planted)).toEqual([]);
    const after = await history(client, session.id);
    expect(JSON.stringify(after)).not.toContain(planted);
    expect(after.find((e) => e.type === "user.message")?.content).toEqual([
      { type: "text", text: "[erased]" },
    ]);
    expect((await client.beta.sessions.retrieve(session.id)).title).toBeNull();
    const erasures = await call("GET", `/v1/awaken/data_subjects/${profile.id}/erasures`);
    expect((erasures.json.data as unknown[]).length).toBeGreaterThanOrEqual(1);
    // Its id is refused from then on.
    await expectApiError(
      client.beta.sessions.create({ agent: agent.id, environment_id: environment.id }, as(profile.id)),
      Anthropic.UserProfileNotFoundError,
      BAD_REQUEST,
    );
  });
});
