import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type {
  BetaDeletedSkill,
  BetaDeletedSkillVersion,
  BetaSkill,
  BetaSkillVersion,
} from "@anthropic-ai/sdk/resources/beta/skills";
import type {
  DeletedSkill,
  DeletedSkillVersion,
  Skill,
  SkillVersion,
} from "@anthropic-ai/sdk/resources/skills";
import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAllInOne } from "../../src/cli/allInOne.js";
import { digestOf } from "../../src/resources/blobs/blobDigest.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, BAD_REQUEST, expectApiError, idsOf, NOT_FOUND, RFC3339 } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// Custom skills and their versions through the official SDK over real HTTP, beta and GA, on
// SQLite and on the real PostgreSQL server.

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

const skillMd = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\nUse the scripts.\n`;

async function bundle(dir: string, files: Record<string, string>) {
  return Promise.all(
    Object.entries(files).map(([path, text]) => toFile(Buffer.from(text), `${dir}/${path}`)),
  );
}

// An empty file is part of a bundle like any other (a Python package's `__init__.py`).
const pdfV1 = () =>
  bundle("pdf-tools", {
    "SKILL.md": skillMd("pdf-tools", "Fill PDF forms."),
    "scripts/fill.py": "print(1)\n",
    "scripts/__init__.py": "",
  });

for (const backend of BACKENDS) {
  describe.skipIf(backend.unavailable() !== null)(`skills on ${backend.name}`, () => {
    let t: TestServer;
    let client: Anthropic;
    let other: Anthropic;
    beforeAll(async () => {
      t = await startTestServer({ databaseUrl: await backend.databaseUrl() });
      client = t.client;
      other = new Anthropic({
        apiKey: await mintAdmin(t, "wrkspc_skills-b"),
        baseURL: t.server.url,
        maxRetries: 0,
      });
    });
    afterAll(async () => {
      await t?.close();
      for (const drop of drops.splice(0)) await drop();
    });

    it("create, retrieve, list and delete a skill and its versions (beta and GA answer alike)", async () => {
      const created: BetaSkill = await client.beta.skills.create({ files: await pdfV1() });
      expect(created).toMatchObject({ type: "skill", display_name: "pdf-tools", source: { type: "custom" } });
      expect(created.id).toMatch(/^skill_/);
      expect(created.latest_version_id).toMatch(/^skillver_/);
      expect(created.created_at).toMatch(RFC3339);
      expect(created.updated_at).toMatch(RFC3339);
      const ga: Skill = await client.skills.retrieve(created.id);
      expect(ga).toEqual(created);
      expect(await client.beta.skills.retrieve(created.id)).toEqual(created);

      const first: BetaSkillVersion = await client.beta.skills.versions.retrieve(created.latest_version_id, {
        skill_id: created.id,
      });
      expect(first).toEqual({
        id: created.latest_version_id,
        type: "skill_version",
        skill_id: created.id,
        name: "pdf-tools",
        description: "Fill PDF forms.",
        created_at: expect.stringMatching(RFC3339),
      });

      // A new version (GA) becomes latest; the name stays, the description follows the upload.
      const second: SkillVersion = await client.skills.versions.create(created.id, {
        files: await bundle("pdf-tools", { "SKILL.md": skillMd("pdf-tools", "Fill and sign PDF forms.") }),
      });
      expect(second).toMatchObject({
        skill_id: created.id,
        name: "pdf-tools",
        description: "Fill and sign PDF forms.",
      });
      expect((await client.skills.retrieve(created.id)).latest_version_id).toBe(second.id);
      expect(await client.skills.versions.retrieve("latest", { skill_id: created.id })).toEqual(second);
      expect(idsOf(await all(client.beta.skills.versions.list(created.id, { limit: 1 })))).toEqual([
        second.id,
        first.id,
      ]);
      expect(idsOf(await all(client.skills.versions.list(created.id)))).toEqual([second.id, first.id]);

      // Versions are immutable: the first still reads as it was.
      expect(await client.skills.versions.retrieve(first.id, { skill_id: created.id })).toEqual(first);

      const deletedVersion: BetaDeletedSkillVersion = await client.beta.skills.versions.delete(second.id, {
        skill_id: created.id,
      });
      expect(deletedVersion).toEqual({ id: second.id, type: "skill_version_deleted" });
      expect((await client.skills.retrieve(created.id)).latest_version_id).toBe(first.id);
      await expectApiError(
        client.skills.versions.retrieve(second.id, { skill_id: created.id }),
        Anthropic.NotFoundError,
        NOT_FOUND,
      );
      // A skill holds at least one version.
      await expectApiError(
        client.skills.versions.delete(first.id, { skill_id: created.id }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [/only version/, /delete the skill instead/] },
      );

      const deleted: BetaDeletedSkill = await client.beta.skills.delete(created.id);
      expect(deleted).toEqual({ id: created.id, type: "skill_deleted" });
      await expectApiError(client.skills.retrieve(created.id), Anthropic.NotFoundError, NOT_FOUND);
      await expectApiError(
        client.skills.versions.retrieve(first.id, { skill_id: created.id }),
        Anthropic.NotFoundError,
        NOT_FOUND,
      );
      await expectApiError(client.skills.delete(created.id), Anthropic.NotFoundError, NOT_FOUND);
    });

    it("display_name is the caller's when given; a zip upload is one bundle; download answers the same zip every time", async () => {
      const archive = zipSync({
        "csv-tools/SKILL.md": strToU8(skillMd("csv-tools", "Read CSV files.")),
        "csv-tools/lib/read.py": strToU8("import csv\n"),
      });
      const skill = await client.skills.create({
        files: [await toFile(Buffer.from(archive), "csv-tools.zip")],
        display_name: "CSV helpers",
      });
      expect(skill.display_name).toBe("CSV helpers");
      const response = await client.beta.skills.versions.download(skill.latest_version_id, {
        skill_id: skill.id,
      });
      expect(response.headers.get("content-type")).toBe("application/zip");
      expect(response.headers.get("content-disposition")).toBe('attachment; filename="csv-tools.zip"');
      const bytes = new Uint8Array(await response.arrayBuffer());
      const again = new Uint8Array(
        await (await client.beta.skills.versions.download("latest", { skill_id: skill.id })).arrayBuffer(),
      );
      expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
      const files = unzipSync(bytes);
      expect(Object.keys(files).sort()).toEqual(["csv-tools/SKILL.md", "csv-tools/lib/read.py"]);
      expect(strFromU8(files["csv-tools/lib/read.py"]!)).toBe("import csv\n");
    });

    it("list filters by source and pages; only custom skills exist here", async () => {
      const a = await client.beta.skills.create({
        files: await bundle("list-a", { "SKILL.md": skillMd("list-a", "a") }),
      });
      const b = await client.beta.skills.create({
        files: await bundle("list-b", { "SKILL.md": skillMd("list-b", "b") }),
      });
      const listed = idsOf(await all(client.beta.skills.list({ limit: 1 })));
      expect(listed.indexOf(b.id)).toBeLessThan(listed.indexOf(a.id));
      expect(idsOf(await all(client.skills.list({ source: "custom" })))).toEqual(listed);
      expect((await client.beta.skills.list({ source: "anthropic" })).data).toEqual([]);
      await expectApiError(client.skills.list({ source: "elsewhere" }), Anthropic.BadRequestError, {
        ...BAD_REQUEST,
        message: [/source/],
      });
    });

    it("refuses a bad bundle with a 400 naming the problem, writing nothing", async () => {
      const before = idsOf(await all(client.skills.list()));
      const cases: Array<[Array<Awaited<ReturnType<typeof toFile>>>, RegExp]> = [
        [await bundle("x", { "README.md": "no skill" }), /no SKILL.md at the root of "x"/],
        [
          [...(await pdfV1()), await toFile(Buffer.from("y"), "other/y.py")],
          /one top-level directory: found "pdf-tools" and "other"/,
        ],
        [[await toFile(Buffer.from("y"), "../escape/SKILL.md")], /'\.\.' segment/],
        [[await toFile(Buffer.from("y"), "/etc/SKILL.md")], /absolute path/],
        [await bundle("pdf-tools", { "SKILL.md": "# no front matter" }), /YAML front matter/],
        [
          await bundle("pdf-tools", { "SKILL.md": "---\nname: Bad Name\ndescription: d\n---\n" }),
          /not kebab-case/,
        ],
        [[await toFile(Buffer.from("not a zip"), "bundle.zip")], /not a readable zip/],
      ];
      for (const [files, message] of cases) {
        await expectApiError(client.beta.skills.create({ files }), Anthropic.BadRequestError, {
          ...BAD_REQUEST,
          message: [message],
        });
      }
      await expectApiError(
        client.beta.skills.create({ files: await pdfV1(), display_name: "two\nlines" }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [/display_name: must be a single line/] },
      );
      // A later version must keep the skill's name.
      const skill = await client.skills.create({ files: await pdfV1() });
      await expectApiError(
        client.skills.versions.create(skill.id, {
          files: await bundle("renamed", { "SKILL.md": skillMd("renamed", "d") }),
        }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [/"renamed" is not this skill's "pdf-tools"/] },
      );
      expect(idsOf(await all(client.skills.versions.list(skill.id)))).toEqual([skill.latest_version_id]);
      expect(idsOf(await all(client.skills.list()))).toEqual([skill.id, ...before]);
    });

    it("bytes a file and a skill's version share outlive either one's delete and go with the last", async () => {
      const script = `print("shared ${backend.name}")\n`;
      const file = await client.files.upload({ file: await toFile(Buffer.from(script), "fill.py") });
      const skill = await client.beta.skills.create({
        files: await bundle("shared-bytes", {
          "SKILL.md": skillMd("shared-bytes", "Shares a script with a file."),
          "fill.py": script,
        }),
      });
      const second = await client.beta.skills.versions.create(skill.id, {
        files: await bundle("shared-bytes", {
          "SKILL.md": skillMd("shared-bytes", "A second version."),
          "fill.py": script,
        }),
      });
      // On SQLite the blob is a file of the data dir: its presence is the proof.
      const hex = digestOf(Buffer.from(script)).slice("sha256:".length);
      const blob =
        backend.name === "SQLite" ? join(t.dataDir, "blobs", "sha256", hex.slice(0, 2), hex.slice(2)) : null;
      const zipHolds = async (version: string) => {
        const zip = unzipSync(
          new Uint8Array(
            await (await client.beta.skills.versions.download(version, { skill_id: skill.id })).arrayBuffer(),
          ),
        );
        return strFromU8(zip["shared-bytes/fill.py"] ?? new Uint8Array());
      };

      await client.files.delete(file.id);
      expect(await zipHolds(second.id)).toBe(script);
      await client.beta.skills.versions.delete(skill.latest_version_id, { skill_id: skill.id });
      expect(await zipHolds(second.id)).toBe(script);
      if (blob) expect(existsSync(blob)).toBe(true);
      await client.beta.skills.delete(skill.id);
      if (blob) expect(existsSync(blob)).toBe(false);
    });

    it("another workspace's skill and versions answer 404 to every operation", async () => {
      const skill = await client.skills.create({ files: await pdfV1() });
      const version = skill.latest_version_id;
      const params = { skill_id: skill.id };
      for (const call of [
        () => other.skills.retrieve(skill.id),
        () => other.beta.skills.delete(skill.id),
        () => other.skills.versions.retrieve(version, params),
        () => other.skills.versions.list(skill.id),
        () => other.skills.versions.delete(version, params),
        () => other.beta.skills.versions.download(version, params),
        async () => other.skills.versions.create(skill.id, { files: await pdfV1() }),
      ]) {
        await expectApiError(call(), Anthropic.NotFoundError, NOT_FOUND);
      }
      expect(idsOf(await all(other.skills.list()))).not.toContain(skill.id);
      expect((await client.skills.retrieve(skill.id)).latest_version_id).toBe(version);

      // The owner's GA deletes answer the SDK's GA types.
      const extra = await client.beta.skills.versions.create(skill.id, { files: await pdfV1() });
      const gaVersion: DeletedSkillVersion = await client.skills.versions.delete(extra.id, params);
      expect(gaVersion).toEqual({ id: extra.id, type: "skill_version_deleted" });
      const gaSkill: DeletedSkill = await client.skills.delete(skill.id);
      expect(gaSkill).toEqual({ id: skill.id, type: "skill_deleted" });
    });
  });
}

describe("skill limits", () => {
  it("a bad AWAKEN_SKILL_MAX_BYTES stops start-up, naming it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-skill-limits-"));
    try {
      await expect(
        startAllInOne(
          {
            host: "127.0.0.1",
            port: 0,
            dataDir,
            workers: 0,
            leaseMs: 5_000,
            modelIdleTimeoutMs: 300_000,
            ssePingMs: 15_000,
            apiKey: TEST_API_KEY,
            retry: {},
            env: { AWAKEN_SKILL_MAX_BYTES: "30MB" },
          },
          pino({ level: "silent" }),
        ),
      ).rejects.toThrow(/AWAKEN_SKILL_MAX_BYTES must be a positive whole number of bytes, got "30MB"/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("an upload past the operator's limits is refused, naming the limit, writing nothing", async () => {
    const t = await startTestServer({
      env: { AWAKEN_SKILL_MAX_BYTES: "4000", AWAKEN_SKILL_MAX_FILE_BYTES: "2500" },
    });
    try {
      const md = await toFile(Buffer.from(skillMd("big", "d")), "big/SKILL.md");
      const of = (bytes: number, name: string) => toFile(Buffer.alloc(bytes, 0x61), `big/${name}`);
      await expectApiError(
        t.client.beta.skills.create({ files: [md, await of(4001, "one")] }),
        Anthropic.APIError,
        { status: 413, type: "request_too_large", message: [/4000 bytes/] },
      );
      await expectApiError(
        t.client.beta.skills.create({ files: [md, await of(2000, "a"), await of(2000, "b")] }),
        Anthropic.APIError,
        { status: 413, type: "request_too_large", message: [/together exceed the maximum of 4000 bytes/] },
      );
      await expectApiError(
        t.client.skills.create({ files: [md, await of(2501, "a")] }),
        Anthropic.BadRequestError,
        {
          ...BAD_REQUEST,
          message: [/"big\/a" is larger than 2500 bytes/],
        },
      );
      expect((await t.client.skills.list()).data).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

/** An admin key of another workspace, minted by the default workspace's admin. */
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
