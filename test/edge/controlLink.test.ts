import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinkClient } from "../../src/edge/control-link/linkClient.js";
import { linkRoutes } from "../../src/edge/control-link/linkRoutes.js";
import { AwakenError } from "../../src/kernel/errors.js";

/**
 * The private Control↔Coordinator link over real HTTP: only allow-listed methods are callable,
 * only with the control token; values keep their Buffers and undefined arguments; AwakenErrors
 * come back as the same error; a replica that refuses connections is skipped.
 */
const TOKEN = "link-test-token-0123456789abcdef0123456789";

const calls: unknown[][] = [];
const impl = {
  async echo(...args: unknown[]) {
    calls.push(args);
    return { args, material: Buffer.from("s3cret"), nested: [{ bytes: Buffer.from([0, 1, 2]) }] };
  },
  async fail() {
    throw new AwakenError("publication_conflict", "already registered with another fingerprint", {
      details: { agent_id: "agent_1" },
    });
  },
  async crash() {
    throw new Error("database password=hunter2 unreachable");
  },
  async hidden() {
    return "never";
  },
};

let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  app = Fastify();
  app.register(async (scope) =>
    linkRoutes(scope, { token: TOKEN, services: { probe: { impl, methods: ["echo", "fail", "crash"] } } }),
  );
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(() => app.close());

describe("the control link", () => {
  it("calls an allow-listed method with its arguments, Buffers and undefined kept", async () => {
    const client = new LinkClient({ baseUrl: url, token: TOKEN, peer: "the probe" });
    const result = (await client.call("probe", "echo", ["a", undefined, { n: 1, b: Buffer.from("in") }])) as {
      args: unknown[];
      material: Buffer;
      nested: Array<{ bytes: Buffer }>;
    };
    const received = calls.at(-1)!;
    expect(received).toHaveLength(3);
    expect(received[0]).toBe("a");
    expect(received[1]).toBeUndefined();
    expect(Buffer.isBuffer((received[2] as { b: Buffer }).b)).toBe(true);
    expect((received[2] as { b: Buffer }).b.toString()).toBe("in");
    expect(Buffer.isBuffer(result.material)).toBe(true);
    expect(result.material.toString()).toBe("s3cret");
    expect([...result.nested[0]!.bytes]).toEqual([0, 1, 2]);
  });

  it("carries clients' objects shaped like its marks unchanged: no client can make a Buffer or an undefined", async () => {
    const client = new LinkClient({ baseUrl: url, token: TOKEN, peer: "the probe" });
    const lookalikes = {
      schema: { $awaken_buffer: "aGVsbG8=" },
      nested: [{ $awaken_undefined: true }, { $awaken_escaped: { $awaken_buffer: "x" } }],
    };
    const result = (await client.call("probe", "echo", [{ $awaken_undefined: true }, lookalikes])) as {
      args: unknown[];
    };
    const received = calls.at(-1)!;
    expect(received).toEqual([{ $awaken_undefined: true }, lookalikes]);
    expect(Buffer.isBuffer((received[1] as typeof lookalikes).schema)).toBe(false);
    expect(result.args).toEqual([{ $awaken_undefined: true }, lookalikes]);
  });

  it("answers a thrown AwakenError as the same error (code, message, details, retryability)", async () => {
    const client = new LinkClient({ baseUrl: url, token: TOKEN, peer: "the probe" });
    const error = await client.call("probe", "fail", []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AwakenError);
    expect(error).toMatchObject({
      code: "publication_conflict",
      message: "already registered with another fingerprint",
      details: { agent_id: "agent_1" },
      retryable: false,
    });
  });

  it("answers any other failure as a retryable internal error that carries none of its message", async () => {
    const response = await fetch(`${url}/internal/v1/rpc/probe/crash`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: "[]",
    });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("hunter2");
    const client = new LinkClient({ baseUrl: url, token: TOKEN, peer: "the probe" });
    await expect(client.call("probe", "crash", [])).rejects.toMatchObject({
      code: "internal",
      retryable: true,
    });
  });

  it("serves no method outside the allow-list, and nothing without the control token", async () => {
    const client = new LinkClient({ baseUrl: url, token: TOKEN, peer: "the probe" });
    await expect(client.call("probe", "hidden", [])).rejects.toMatchObject({ code: "not_found" });
    await expect(client.call("probe", "constructor", [])).rejects.toMatchObject({ code: "not_found" });
    await expect(client.call("other", "echo", [])).rejects.toMatchObject({ code: "not_found" });
    await expect(client.call("__proto__", "toString", [])).rejects.toMatchObject({ code: "not_found" });
    const before = calls.length;
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${TOKEN}x`, TOKEN]) {
      const response = await fetch(`${url}/internal/v1/rpc/probe/echo`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "[]",
      });
      expect(response.status).toBe(401);
    }
    expect(calls.length).toBe(before);
  });

  it("moves on to the next replica only when a connection was refused", async () => {
    // A port nothing listens on: refused at once, so the call goes to the live replica.
    const dead = Fastify();
    await dead.listen({ host: "127.0.0.1", port: 0 });
    const address = dead.server.address();
    const deadUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    await dead.close();
    const client = new LinkClient({ baseUrl: `${deadUrl},${url}`, token: TOKEN, peer: "the probe" });
    await expect(client.call("probe", "echo", ["x"])).resolves.toBeTruthy();
    const alone = new LinkClient({ baseUrl: deadUrl, token: TOKEN, peer: "the probe" });
    await expect(alone.call("probe", "echo", ["x"])).rejects.toMatchObject({
      code: "unavailable",
      retryable: true,
    });
  });
});
