import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type { BetaDeletedFile, BetaFileMetadata } from "@anthropic-ai/sdk/resources/beta/files";
import type { DeletedFile, FileMetadata } from "@anthropic-ai/sdk/resources/files";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAllInOne } from "../../src/cli/allInOne.js";
import { digestOf } from "../../src/resources/blobs/blobDigest.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { expectApiError, rawRequest } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// Files through the SDK over real HTTP (`client.files` and `client.beta.files`), on SQLite and on
// the real PostgreSQL server, with small limits so the refusals are cheap to reach.

const MAX_FILE = 64 * 1024;
const QUOTA = 160 * 1024;
const ENV = { AWAKEN_FILE_MAX_BYTES: String(MAX_FILE), AWAKEN_WORKSPACE_FILES_MAX_BYTES: String(QUOTA) };
const NOT_FOUND = { status: 404, type: "not_found_error" } as const;
const BAD = { status: 400, type: "invalid_request_error" } as const;
// A 1×1 PNG: its type is sniffed from the bytes, whatever the name or declared type says.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

interface Backend {
  start(): Promise<{ t: TestServer; cleanup(): Promise<void> }>;
  /** The blob directory (SQLite servers keep blobs in the data dir); null: in the database. */
  blobDir(t: TestServer): string | null;
}

const BACKENDS: Record<string, Backend> = {
  SQLite: {
    start: async () => {
      const t = await startTestServer({ env: ENV, workers: 0 });
      return { t, cleanup: () => t.close() };
    },
    blobDir: (t) => join(t.dataDir, "blobs"),
  },
  PostgreSQL: {
    start: async () => {
      const schema = await emptySchema();
      const t = await startTestServer({ env: ENV, workers: 0, databaseUrl: schema.url });
      return {
        t,
        cleanup: async () => {
          await t.close();
          await schema.drop();
        },
      };
    },
    blobDir: () => null,
  },
};

function blobFile(dir: string, bytes: Uint8Array): string {
  const hex = digestOf(bytes).slice("sha256:".length);
  return join(dir, "sha256", hex.slice(0, 2), hex.slice(2));
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

// PostgreSQL is left out only outside CI without a server (`postgresUnavailable`); in CI it runs.
const RUNNING = Object.keys(BACKENDS).filter(
  (name) => name !== "PostgreSQL" || postgresUnavailable() === null,
);

describe.each(RUNNING)("Files on %s", (name) => {
  const backend = BACKENDS[name]!;
  let t: TestServer;
  let cleanup: (() => Promise<void>) | undefined;
  let client: Anthropic;
  let keyCount = 0;

  /** A client of a fresh workspace (its own quota and listing). */
  async function otherWorkspace(): Promise<Anthropic> {
    keyCount += 1;
    const response = await fetch(`${t.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ role: "admin", workspace_id: `wrkspc_files_${keyCount}_${Date.now()}` }),
    });
    expect(response.status).toBe(200);
    const { key } = (await response.json()) as { key: string };
    return new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });
  }

  beforeAll(async () => {
    ({ t, cleanup } = await backend.start());
    client = t.client;
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("beta: upload, retrieve, download and delete round-trip the bytes", async () => {
    const bytes = Buffer.from("hello, beta files\n");
    const uploaded: BetaFileMetadata = await client.beta.files.upload({
      file: await toFile(bytes, "notes.txt", { type: "text/plain" }),
    });
    expect(uploaded).toMatchObject({
      type: "file",
      filename: "notes.txt",
      mime_type: "text/plain",
      size_bytes: bytes.length,
      downloadable: true,
      expires_at: null,
      scope: null,
    });
    expect(uploaded.id).toMatch(/^file_/);
    expect(new Date(uploaded.created_at).toISOString()).toBe(uploaded.created_at);
    const again: BetaFileMetadata = await client.beta.files.retrieveMetadata(uploaded.id);
    expect(again).toEqual(uploaded);
    const response = await client.beta.files.download(uploaded.id);
    expect(response.headers.get("content-type")).toBe("text/plain");
    expect(response.headers.get("content-length")).toBe(String(bytes.length));
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`,
    );
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    const deleted: BetaDeletedFile = await client.beta.files.delete(uploaded.id);
    expect(deleted).toEqual({ id: uploaded.id, type: "file_deleted" });
    await expectApiError(client.beta.files.retrieveMetadata(uploaded.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.beta.files.download(uploaded.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(client.beta.files.delete(uploaded.id), Anthropic.NotFoundError, NOT_FOUND);
  });

  it("GA: upload, retrieve, download and delete round-trip the bytes", async () => {
    const bytes = Buffer.from(Array.from({ length: 50_000 }, (_, i) => i % 251));
    const uploaded: FileMetadata = await client.files.upload({ file: await toFile(bytes, "data.bin") });
    expect(uploaded).toMatchObject({ type: "file", filename: "data.bin", size_bytes: 50_000 });
    expect(uploaded.mime_type).toBe("application/octet-stream");
    const again: FileMetadata = await client.files.retrieveMetadata(uploaded.id);
    expect(again).toEqual(uploaded);
    const body = await (await client.files.download(uploaded.id)).arrayBuffer();
    expect(Buffer.from(body).equals(bytes)).toBe(true);
    const deleted: DeletedFile = await client.files.delete(uploaded.id);
    expect(deleted).toEqual({ id: uploaded.id, type: "file_deleted" });
    await expectApiError(client.files.retrieveMetadata(uploaded.id), Anthropic.NotFoundError, NOT_FOUND);
  });

  it("MIME: sniffed from the bytes, else a text extension, else a valid declared type, else octet-stream", async () => {
    const own = await otherWorkspace();
    const png = await own.files.upload({ file: await toFile(PNG, "picture.txt", { type: "text/plain" }) });
    expect(png.mime_type).toBe("image/png");
    const md = await own.files.upload({ file: await toFile(Buffer.from("# hi"), "README.md") });
    expect(md.mime_type).toBe("text/markdown");
    const declared = await own.files.upload({
      file: await toFile(Buffer.from("x"), "x.custom", { type: "application/vnd.awaken.test" }),
    });
    expect(declared.mime_type).toBe("application/vnd.awaken.test");
    const bogus = await own.files.upload({
      file: await toFile(Buffer.from("x"), "y.custom", { type: "not a type" }),
    });
    expect(bogus.mime_type).toBe("application/octet-stream");
    const response = await own.files.download(png.id);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("an upload without a filename is named unnamed.<extension of its type>", async () => {
    const own = await otherWorkspace();
    const png = await own.files.upload({ file: await toFile(PNG, "") });
    expect(png).toMatchObject({ filename: "unnamed.png", mime_type: "image/png" });
  });

  it("keeps only the final path component; a non-ASCII name is encoded safely on download", async () => {
    const own = await otherWorkspace();
    const nested = await own.beta.files.upload({
      file: await toFile(Buffer.from("a"), "dir/sub/report.csv"),
    });
    expect(nested.filename).toBe("report.csv");
    expect(nested.mime_type).toBe("text/csv");
    const fancy = await own.beta.files.upload({ file: await toFile(Buffer.from("b"), "résumé v2; x.txt") });
    expect(fancy.filename).toBe("résumé v2; x.txt");
    const disposition = (await own.beta.files.download(fancy.id)).headers.get("content-disposition");
    expect(disposition).toBe(
      `attachment; filename="r_sum_ v2_ x.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20v2%3B%20x.txt`,
    );
  });

  it("lists newest first, pages with limit (for await across pages), filters by ids and scope", async () => {
    const own = await otherWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await own.files.upload({ file: await toFile(Buffer.from(`f${i}`), `f${i}.txt`) })).id);
    }
    const newestFirst = [...ids].reverse();
    const first = await own.beta.files.list({ limit: 2 });
    expect(first.data.map((f) => f.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.next_page).toEqual(expect.any(String));
    expect(first.hasNextPage()).toBe(true);
    const everything: BetaFileMetadata[] = await all(own.beta.files.list({ limit: 2 }));
    expect(everything.map((f) => f.id)).toEqual(newestFirst);
    const ga: FileMetadata[] = [];
    for await (const file of own.files.list({ limit: 3 })) ga.push(file);
    expect(ga.map((f) => f.id)).toEqual(newestFirst);
    const byIds = await own.files.list({ ids: [ids[0]!, ids[3]!, ids[0]!, "file_unknown"] });
    expect(byIds.data.map((f) => f.id)).toEqual([ids[3], ids[0]]);
    expect(byIds.next_page).toBeNull();
    expect((await own.beta.files.list({ scope_id: "sesn_none" })).data).toEqual([]);
    await expectApiError(own.files.list({ page: "forged" }), Anthropic.BadRequestError, {
      ...BAD,
      message: [/page/],
    });
  });

  it("the ids filter refuses more than 100 ids and a mix with limit or page", async () => {
    const many = Array.from({ length: 101 }, (_, i) => `file_${i}`);
    await expectApiError(client.files.list({ ids: many }), Anthropic.BadRequestError, {
      ...BAD,
      message: [/ids/, /at most 100/],
    });
    await expectApiError(client.files.list({ ids: ["file_a"], limit: 5 }), Anthropic.BadRequestError, {
      ...BAD,
      message: [/ids/, /limit or page/],
    });
    await expectApiError(client.beta.files.list({ ids: ["file_a"], page: "x" }), Anthropic.BadRequestError, {
      ...BAD,
      message: [/limit or page/],
    });
    await expectApiError(client.files.list({ limit: 0 }), Anthropic.BadRequestError, BAD);
  });

  it("another workspace's file is not found on every operation, and stays intact", async () => {
    const bytes = Buffer.from("private bytes");
    const mine = await client.beta.files.upload({ file: await toFile(bytes, "private.txt") });
    const other = await otherWorkspace();
    const calls: Array<() => Promise<unknown>> = [
      () => other.beta.files.retrieveMetadata(mine.id),
      () => other.beta.files.download(mine.id),
      () => other.beta.files.delete(mine.id),
      () => other.files.retrieveMetadata(mine.id),
      () => other.files.download(mine.id),
      () => other.files.delete(mine.id),
    ];
    for (const call of calls) await expectApiError(call(), Anthropic.NotFoundError, NOT_FOUND);
    expect(await all(other.files.list())).toEqual([]);
    expect((await other.files.list({ ids: [mine.id] })).data).toEqual([]);
    const body = await (await client.beta.files.download(mine.id)).arrayBuffer();
    expect(Buffer.from(body).equals(bytes)).toBe(true);
  });

  it("refuses bad uploads with a 4xx naming the problem", async () => {
    await expectApiError(
      client.files.upload({ file: await toFile(Buffer.alloc(0), "empty.txt") }),
      Anthropic.BadRequestError,
      { ...BAD, message: [/empty/] },
    );
    await expectApiError(
      client.files.upload({ file: await toFile(Buffer.alloc(MAX_FILE + 1, 1), "big.bin") }),
      Anthropic.APIError,
      { status: 413, type: "request_too_large", message: [String(MAX_FILE)] },
    );
    const names: Array<[string, RegExp]> = [
      ["../../etc/passwd", /'\.\.' segment/],
      ["a/../b.txt", /'\.\.' segment/],
      ["/etc/passwd", /absolute path/],
      ["a\0b.txt", /NUL/],
      [`${"n".repeat(300)}.txt`, /longer than 255 bytes/],
    ];
    for (const [filename, problem] of names) {
      await expectApiError(
        client.beta.files.upload({ file: await toFile(Buffer.from("x"), filename) }),
        Anthropic.BadRequestError,
        { ...BAD, message: [/filename/, problem] },
      );
    }
    await expectApiError(
      client.files.upload({ file: await toFile(Buffer.from("x"), "x.txt"), expires_in_seconds: 5 }),
      Anthropic.BadRequestError,
      { ...BAD, message: [/expires_in_seconds/, /3600/] },
    );
  });

  it("refuses a body without the file part, with unknown parts, or not multipart", async () => {
    const post = (body: FormData | string, headers: Record<string, string> = {}) =>
      fetch(`${t.server.url}/v1/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_API_KEY}`, ...headers },
        body,
      });
    const messageOf = async (response: Response) => {
      expect(response.status).toBe(400);
      return ((await response.json()) as { error: { message: string } }).error.message;
    };
    const noFile = new FormData();
    noFile.append("expires_in_seconds", "3600");
    expect(await messageOf(await post(noFile))).toMatch(/file: is required/);
    const unknown = new FormData();
    unknown.append("file", new Blob(["x"]), "x.txt");
    unknown.append("purpose", "assistants");
    expect(await messageOf(await post(unknown))).toMatch(/purpose/);
    const json = await rawRequest(t, "POST", "/v1/files", { body: JSON.stringify({ file: "x" }) });
    expect(json.status).toBe(400);
    expect(JSON.stringify(json.body)).toContain("multipart/form-data");
  });

  it("expires_in_seconds sets expires_at", async () => {
    const file = await client.beta.files.upload({
      file: await toFile(Buffer.from("soon"), "soon.txt"),
      expires_in_seconds: 3600,
    });
    expect(Date.parse(file.expires_at!) - Date.parse(file.created_at)).toBe(3_600_000);
    expect(Buffer.from(await (await client.beta.files.download(file.id)).arrayBuffer()).toString()).toBe(
      "soon",
    );
  });

  it("the workspace quota refuses an upload that would exceed it and writes nothing", async () => {
    const own = await otherWorkspace();
    const chunk = (fill: number) => Buffer.alloc(60 * 1024, fill);
    await own.files.upload({ file: await toFile(chunk(1), "one.bin") });
    await own.files.upload({ file: await toFile(chunk(2), "two.bin") });
    const refused = chunk(3);
    const error = await expectApiError(
      own.files.upload({ file: await toFile(refused, "three.bin") }),
      Anthropic.StorageQuotaExceededError,
      { ...BAD, message: [String(QUOTA), /AWAKEN_WORKSPACE_FILES_MAX_BYTES/] },
    );
    expect(error.errorCode).toBe("storage_quota_exceeded");
    expect((await all(own.files.list())).map((f) => f.filename)).toEqual(["two.bin", "one.bin"]);
    const dir = backend.blobDir(t);
    if (dir) expect(existsSync(blobFile(dir, refused))).toBe(false);
    // The other workspaces' usage is their own: the default workspace still uploads.
    await client.files.upload({ file: await toFile(chunk(4), "elsewhere.bin") });
  });

  it("a blob shared by two files is deleted only with the last file that references it", async () => {
    const own = await otherWorkspace();
    const bytes = Buffer.from("shared content for two files");
    const a = await own.files.upload({ file: await toFile(bytes, "a.txt") });
    const b = await own.files.upload({ file: await toFile(bytes, "b.txt") });
    const dir = backend.blobDir(t);
    await own.files.delete(a.id);
    expect(Buffer.from(await (await own.files.download(b.id)).arrayBuffer()).equals(bytes)).toBe(true);
    if (dir) expect(existsSync(blobFile(dir, bytes))).toBe(true);
    await own.files.delete(b.id);
    if (dir) expect(existsSync(blobFile(dir, bytes))).toBe(false);
  });
});

describe("Files beyond the JSON body limit", () => {
  it("a 33 MiB upload passes the server's 32 MiB JSON body limit: files have their own limit", async () => {
    const t = await startTestServer({ workers: 0 });
    try {
      const bytes = Buffer.alloc(33 * 1024 * 1024, 0x61);
      bytes.write("large file", 0);
      const file = await t.client.files.upload({ file: await toFile(bytes, "large.bin") });
      expect(file.size_bytes).toBe(bytes.length);
      const back = Buffer.from(await (await t.client.files.download(file.id)).arrayBuffer());
      expect(back.equals(bytes)).toBe(true);
    } finally {
      await t.close();
    }
  });
});

describe("Files limits at start-up", () => {
  it.each([
    ["AWAKEN_FILE_MAX_BYTES", "100MB"],
    ["AWAKEN_WORKSPACE_FILES_MAX_BYTES", "0"],
  ])("%s=%s stops the server from starting, naming the variable", async (variable, value) => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-files-limits-"));
    try {
      const starting = startAllInOne(
        {
          host: "127.0.0.1",
          port: 0,
          listen: false,
          dataDir,
          workers: 0,
          leaseMs: 5_000,
          modelIdleTimeoutMs: 300_000,
          ssePingMs: 15_000,
          apiKey: TEST_API_KEY,
          retry: {},
          env: { [variable]: value },
        },
        pino({ level: "silent" }),
      );
      await expect(starting).rejects.toThrow(new RegExp(`${variable} must be a whole number of bytes`));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
