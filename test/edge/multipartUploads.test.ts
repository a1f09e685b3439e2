import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyFailure } from "../../src/edge/http/edgeFailure.js";
import { installJsonBodyParser } from "../../src/edge/http/jsonBodyParser.js";
import { answerManagedError } from "../../src/edge/managed-agents/errorEnvelope.js";
import {
  checkRelativeUploadPath,
  readMultipartUpload,
  registerMultipartUploads,
  requireMultipart,
} from "../../src/edge/managed-agents/multipartUploads.js";

// A server whose JSON body limit (1 KiB) is far under the upload limit (64 KiB): uploads are bounded
// by the route's own limit, never by `bodyLimit`, and JSON still parses beside multipart.
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = Fastify({ bodyLimit: 1024 });
  installJsonBodyParser(app);
  app.register(async (scope) => {
    scope.setErrorHandler((error, request, reply) =>
      answerManagedError(classifyFailure(error, request), request, reply),
    );
    registerMultipartUploads(scope);
    scope.post("/upload", async (request) => {
      const form = await readMultipartUpload(request, {
        fileFields: { file: { many: false }, "files[]": { many: true } },
        textFields: ["purpose"],
        maxFileBytes: 64 * 1024,
      });
      return {
        files: form.files.map((f) => ({ field: f.field, filename: f.filename, size: f.bytes.length })),
        fields: Object.fromEntries(form.fields),
      };
    });
    scope.post("/strict", { preParsing: requireMultipart }, async () => ({ ok: true }));
    scope.post("/json", async (request) => ({ got: request.body }));
  });
  base = await app.listen({ host: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  await app.close();
});

function form(entries: Array<[string, string | Blob, string?]>): FormData {
  const body = new FormData();
  for (const [name, value, filename] of entries) {
    if (typeof value === "string") body.append(name, value);
    else body.append(name, value, filename);
  }
  return body;
}

async function post(body: FormData | string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/upload`, { method: "POST", body, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function message(answer: { body: Record<string, unknown> }): string {
  return String((answer.body.error as { message?: string } | undefined)?.message);
}

describe("multipart uploads", () => {
  it("reads files and fields; a file above the JSON body limit is bounded only by the route's limit", async () => {
    const big = new Blob([new Uint8Array(40 * 1024).fill(7)]);
    const answer = await post(
      form([
        ["file", big, "big.bin"],
        ["purpose", "test"],
      ]),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      files: [{ field: "file", filename: "big.bin", size: 40 * 1024 }],
      fields: { purpose: "test" },
    });
  });

  it("keeps relative paths as sent (a skill bundle's dir/SKILL.md)", async () => {
    const answer = await post(
      form([
        ["files[]", new Blob(["a"]), "skill/SKILL.md"],
        ["files[]", new Blob(["b"]), "skill/lib/x.py"],
      ]),
    );
    expect(answer.status).toBe(200);
    expect((answer.body.files as Array<{ filename: string }>).map((f) => f.filename)).toEqual([
      "skill/SKILL.md",
      "skill/lib/x.py",
    ]);
  });

  it("JSON bodies still parse beside multipart", async () => {
    const response = await fetch(`${base}/json`, {
      method: "POST",
      body: JSON.stringify({ a: 1 }),
      headers: { "content-type": "application/json" },
    });
    expect(await response.json()).toEqual({ got: { a: 1 } });
  });

  it("a file over the route's limit is a 413 naming the limit", async () => {
    const answer = await post(form([["file", new Blob([new Uint8Array(65 * 1024)]), "x.bin"]]));
    expect(answer.status).toBe(413);
    expect((answer.body.error as { type: string }).type).toBe("request_too_large");
    expect(message(answer)).toContain("65536 bytes");
  });

  it("a JSON body on an upload route is a 400 naming multipart/form-data", async () => {
    const answer = await post(JSON.stringify({ file: "x" }), { "content-type": "application/json" });
    expect(answer.status).toBe(400);
    expect(message(answer)).toContain("multipart/form-data");
  });

  it("a route guarded by requireMultipart answers any other body with a 400 naming multipart/form-data", async () => {
    for (const type of ["text/plain", "application/json", "application/octet-stream"]) {
      const response = await fetch(`${base}/strict`, {
        method: "POST",
        body: "{}",
        headers: { "content-type": type },
      });
      expect(response.status).toBe(400);
      expect(JSON.stringify(await response.json())).toContain("multipart/form-data");
    }
    const ok = await fetch(`${base}/strict`, {
      method: "POST",
      body: form([["file", new Blob(["x"]), "x"]]),
    });
    expect(ok.status).toBe(200);
  });

  it("an empty file, an unknown field and a repeated single file are 400s naming them", async () => {
    const empty = await post(form([["file", new Blob([]), "e.txt"]]));
    expect(empty.status).toBe(400);
    expect(message(empty)).toContain("is empty");
    const unknown = await post(form([["nope", "1"]]));
    expect(unknown.status).toBe(400);
    expect(message(unknown)).toContain("nope");
    const unknownFile = await post(form([["other", new Blob(["x"]), "x.txt"]]));
    expect(unknownFile.status).toBe(400);
    expect(message(unknownFile)).toContain("other");
    const twice = await post(
      form([
        ["file", new Blob(["x"]), "a.txt"],
        ["file", new Blob(["y"]), "b.txt"],
      ]),
    );
    expect(twice.status).toBe(400);
    expect(message(twice)).toContain("more than once");
  });

  it("a file part without a filename is read with the name empty (the route names it), never a 500", async () => {
    const body =
      '--X\r\ncontent-disposition: form-data; name="file"\r\ncontent-type: application/octet-stream\r\n\r\nabc\r\n--X--\r\n';
    const answer = await post(body, { "content-type": "multipart/form-data; boundary=X" });
    expect(answer.status).toBe(200);
    expect(answer.body.files).toEqual([{ field: "file", filename: "", size: 3 }]);
  });

  it("a malformed multipart body is a 400", async () => {
    const answer = await post('--X\r\ncontent-disposition: form-data; name="file"; filename="a"\r\n\r\nabc', {
      "content-type": "multipart/form-data; boundary=X",
    });
    expect(answer.status).toBe(400);
    const noBoundary = await post("abc", { "content-type": "multipart/form-data" });
    expect(noBoundary.status).toBe(400);
  });

  it("a field named after an object's prototype is a 400", async () => {
    for (const name of ["__proto__", "constructor"]) {
      const answer = await post(form([[name, "x"]]));
      expect(answer.status).toBe(400);
    }
  });

  it.each([
    ["../etc/passwd", "'..' segment"],
    ["a/../../b", "'..' segment"],
    ["/etc/passwd", "absolute path"],
    ["C:evil.txt", "absolute path"],
    ["a\\b.txt", "backslash"],
    [`${"x".repeat(300)}.txt`, "longer than 255 bytes"],
  ])("the filename %j is a 400 naming the problem", async (filename, problem) => {
    const answer = await post(form([["file", new Blob(["x"]), filename]]));
    expect(answer.status).toBe(400);
    expect(message(answer)).toContain(problem);
  });

  it("checkRelativeUploadPath refuses empty, '.' and NUL segments and keeps a clean path", () => {
    expect(checkRelativeUploadPath("skill/SKILL.md")).toBe("skill/SKILL.md");
    expect(() => checkRelativeUploadPath("skill//SKILL.md")).toThrow(/empty or '.' segment/);
    expect(() => checkRelativeUploadPath("./SKILL.md")).toThrow(/empty or '.' segment/);
    expect(() => checkRelativeUploadPath("a\0b")).toThrow(/NUL/);
    expect(() => checkRelativeUploadPath("")).toThrow(/is empty/);
  });
});
