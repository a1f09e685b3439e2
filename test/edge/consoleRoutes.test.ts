/**
 * The Console's static routes on a real listening server, over files made for the test: only the
 * built assets are served, index.html gets a relative base for its depth, and an unbuilt Console
 * says so instead of failing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConsoleAssets } from "../../src/edge/http/consoleAssets.js";
import { CONSOLE_CSP, consoleRoutes, indexFor } from "../../src/edge/http/consoleRoutes.js";

const INDEX =
  '<!doctype html><html><head><script type="module" src="./assets/app-1a2b.js"></script></head></html>';
const SCRIPT = `console.log(${JSON.stringify("x".repeat(4096))});`;

let dir: string;
let built: FastifyInstance;
let unbuilt: FastifyInstance;
let builtUrl: string;
let unbuiltUrl: string;

async function serve(assetsDir: string): Promise<[FastifyInstance, string]> {
  const app = Fastify();
  consoleRoutes(app, loadConsoleAssets(assetsDir));
  return [app, await app.listen({ host: "127.0.0.1", port: 0 })];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "awaken-console-assets-"));
  mkdirSync(join(dir, "built", "assets"), { recursive: true });
  writeFileSync(join(dir, "built", "index.html"), INDEX);
  writeFileSync(join(dir, "built", "assets", "app-1a2b.js"), SCRIPT);
  writeFileSync(join(dir, "built", "assets", "notes.txt"), "not a served type");
  writeFileSync(join(dir, "secret.txt"), "outside the console");
  [built, builtUrl] = await serve(join(dir, "built"));
  [unbuilt, unbuiltUrl] = await serve(join(dir, "missing"));
});
afterAll(async () => {
  await built?.close();
  await unbuilt?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the Console's routes", () => {
  it("index.html names the Console's root relative to each client route's depth", () => {
    expect(indexFor("<head></head>", "")).toBe('<head>\n    <base href="./" /></head>');
    expect(indexFor("<head></head>", "sessions")).toContain('<base href="./" />');
    expect(indexFor("<head></head>", "sessions/sesn_1")).toContain('<base href="../" />');
    expect(indexFor("<head></head>", "a/b/c/")).toContain('<base href="../../../" />');
  });

  it("a browser opening the server's root is sent to the Console; an API client gets a 404", async () => {
    const browser = await fetch(`${builtUrl}/`, {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
      redirect: "manual",
    });
    expect(browser.status).toBe(303);
    expect(browser.headers.get("location")).toBe("console/");
    const api = await fetch(`${builtUrl}/`, { headers: { accept: "application/json" } });
    expect(api.status).toBe(404);
    expect(api.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await fetch(`${builtUrl}/`)).status).toBe(404);
  });

  it("serves index.html for client routes, uncached, under the CSP", async () => {
    const response = await fetch(`${builtUrl}/console/sessions/sesn_1?x=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(await response.text()).toContain('<base href="../" />');
  });

  it("serves hashed assets immutable, gzipped when asked, and nothing else on disk", async () => {
    const plain = await fetch(`${builtUrl}/console/assets/app-1a2b.js`, {
      headers: { "accept-encoding": "identity" },
    });
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toBe(SCRIPT);
    // Node's fetch always accepts gzip and inflates it; read the raw bytes through a plain request.
    const { request } = await import("node:http");
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      request(`${builtUrl}/console/assets/app-1a2b.js`, { headers: { "accept-encoding": "gzip" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }),
        );
      })
        .on("error", reject)
        .end();
    });
    expect(raw.encoding).toBe("gzip");
    expect(gunzipSync(raw.body).toString()).toBe(SCRIPT);
    for (const path of [
      "assets/notes.txt",
      "assets/../../secret.txt",
      "assets/%2e%2e%2fsecret.txt",
      "assets/",
    ]) {
      const response = await fetch(`${builtUrl}/console/${path}`);
      expect(response.status, path).toBe(404);
    }
  });

  it("odd paths a client may send are answered without a server error", async () => {
    for (const path of [
      "%E0%A4%A",
      "assets/%00",
      "assets/%E0%A4%A",
      `${"a/".repeat(500)}x`,
      "assets/app-1a2b.js.gz",
    ]) {
      const response = await fetch(`${builtUrl}/console/${path}`);
      expect(response.status, path).toBeLessThan(500);
    }
  });

  it("an unbuilt Console answers 503 with what to run", async () => {
    const response = await fetch(`${unbuiltUrl}/console/`);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain("npm run build");
  });
});
