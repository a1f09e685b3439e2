import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BAD_REQUEST, expectRawError, MODEL, rawRequest } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// A query such as `?__proto__[x]=1` was once folded into `out.__proto__.x` on a plain object: it
// wrote `Object.prototype` of the whole server process. Names a client chooses (query names, body
// keys) must be refused where they reach a prototype, and the server must go on answering.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** The server runs in this process: its `Object.prototype` is this one. */
function prototypeIsClean(): boolean {
  return ({} as Record<string, unknown>).x === undefined && !Object.hasOwn(Object.prototype, "x");
}

afterEach(() => {
  // On a regression, keep one polluted prototype from failing every later test of the file.
  delete (Object.prototype as Record<string, unknown>).x;
});

describe("names that reach a prototype are refused at the edge", () => {
  it.each([
    ["__proto__%5Bx%5D=1", "__proto__[x]", "__proto__"],
    ["__proto__[x]=1", "__proto__[x]", "__proto__"],
    ["constructor%5Bprototype%5D%5Bx%5D=1", "constructor[prototype][x]", "constructor"],
    ["limit=5&prototype=1", "prototype", "prototype"],
    ["__proto__=1", "__proto__", "__proto__"],
    ["constructor=1", "constructor", "constructor"],
    ["created_at%5B__proto__%5D=1", "created_at[__proto__]", "__proto__"],
  ])("GET /v1/sessions?%s is a 400 naming the parameter", async (query, field, name) => {
    const response = await rawRequest(t, "GET", `/v1/sessions?${query}`);
    const message = expectRawError(response, BAD_REQUEST.status, BAD_REQUEST.type);
    expect(message).toContain(field);
    expect(message).toContain(`the name "${name}" is not accepted`);
    expect(prototypeIsClean()).toBe(true);
    // The server goes on answering, the same query without the name included.
    const next = await rawRequest(t, "GET", "/v1/sessions?limit=5");
    expect(next.status).toBe(200);
    expect(prototypeIsClean()).toBe(true);
  });

  it("every list route refuses them, not only sessions", async () => {
    for (const path of [
      "/v1/agents",
      "/v1/environments",
      "/v1/vaults",
      "/v1/models",
      "/v1/awaken/api_keys",
    ]) {
      const response = await rawRequest(t, "GET", `${path}?__proto__%5Bx%5D=1`);
      expect(expectRawError(response, 400, BAD_REQUEST.type)).toContain("__proto__[x]");
    }
    expect(prototypeIsClean()).toBe(true);
  });

  it("the other edges' queries pollute nothing and never answer 5xx", async () => {
    const paths = [
      "/v1/ai-sdk/threads/ses_x/messages?__proto__%5Bx%5D=1",
      "/v1/a2a/agents/agent_x/rest/tasks?__proto__%5Bx%5D=1",
      "/v1/ai-sdk/chat/c1/stream?__proto__%5Bx%5D=1",
    ];
    for (const path of paths) {
      const response = await rawRequest(t, "GET", path);
      expect(response.status, path).toBeLessThan(500);
    }
    expect(prototypeIsClean()).toBe(true);
  });

  it("a body key __proto__ in a metadata map, sent as raw JSON text, is a 400 naming it", async () => {
    const response = await rawRequest(t, "POST", "/v1/agents", {
      body: `{"name":"p","model":"${MODEL}","metadata":{"__proto__":{"x":"1"}}}`,
    });
    const message = expectRawError(response, 400, BAD_REQUEST.type);
    expect(message).toContain("metadata.__proto__");
    expect(prototypeIsClean()).toBe(true);
    const created = await rawRequest(t, "POST", "/v1/agents", {
      body: `{"name":"p","model":"${MODEL}","metadata":{"k":"v"}}`,
    });
    expect(created.status).toBe(200);
  });
});
