import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpPoster } from "../../src/worker/httpPost.js";

// The remote worker's HTTP client, against a real local server.

let servers: http.Server[] = [];
let poster: HttpPoster | undefined;
afterEach(async () => {
  poster?.close();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  servers = [];
});

async function listen(handler: http.RequestListener): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = http.createServer(handler);
  servers.push(server);
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

describe("HttpPoster", () => {
  it("posts the body with its headers and reads the whole answer, over kept-alive connections", async () => {
    const seen: { body: string; type: string | undefined; auth: string | undefined }[] = [];
    const { url, connections } = await listen((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        seen.push({ body, type: req.headers["content-type"], auth: req.headers.authorization });
        res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "application/json" });
        res.end(JSON.stringify({ echo: body, pad: "é".repeat(50_000) }));
      });
    });
    poster = new HttpPoster(url);
    const headers = { authorization: "Bearer t", "content-type": "application/json" };
    for (let i = 0; i < 5; i++) {
      const answer = await poster.post("/call", headers, JSON.stringify({ i, text: "é ✓" }), 5_000);
      expect(answer.status).toBe(200);
      // A large multi-byte answer arrives whole and decoded.
      expect(JSON.parse(answer.text)).toEqual({
        echo: JSON.stringify({ i, text: "é ✓" }),
        pad: "é".repeat(50_000),
      });
    }
    expect((await poster.post("/missing", headers, "{}", 5_000)).status).toBe(404);
    expect(seen).toHaveLength(6);
    expect(seen[0]).toEqual({ body: '{"i":0,"text":"é ✓"}', type: "application/json", auth: "Bearer t" });
    // undici lets a connection rest one event-loop turn before reusing it, so calls made back to
    // back alternate between two; without keep-alive each of the six would open its own.
    expect(connections()).toBeLessThanOrEqual(2);
  });

  it("rejects when the answer does not arrive in time, and when nothing listens", async () => {
    const { url } = await listen(() => {
      // Never answers.
    });
    poster = new HttpPoster(url);
    await expect(poster.post("/slow", {}, "{}", 100)).rejects.toThrow(/timeout/i);
    const closed = new HttpPoster("http://127.0.0.1:1");
    await expect(closed.post("/x", {}, "{}", 2_000)).rejects.toThrow(/ECONNREFUSED/);
    closed.close();
    // A base URL with a path (a coordinator behind a prefix) keeps it in front of every call.
    const paths: string[] = [];
    const prefixed = await listen((req, res) => {
      paths.push(req.url ?? "");
      res.end("{}");
    });
    const behindPrefix = new HttpPoster(`${prefixed.url}/awaken/`);
    expect((await behindPrefix.post("/v1/x", {}, "{}", 2_000)).status).toBe(200);
    behindPrefix.close();
    expect(paths).toEqual(["/awaken/v1/x"]);
  });
});
