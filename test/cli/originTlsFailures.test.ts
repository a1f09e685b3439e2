/**
 * The connector's account of a TLS failure with a route's MCP server, over real sockets: a server
 * that requires a client certificate ends the handshake under TLS 1.3 (after the client finished)
 * and under TLS 1.2 (during it); either way the failure names the TLS handshake and the fix,
 * where undici alone says "other side closed" for TLS 1.3. A certificate the server accepts works.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { originTls } from "../../src/cli/originTlsFailures.js";
import { createTestCa, type TestCa } from "../support/testCa.js";

describe("a TLS failure with an MCP server that requires a client certificate", () => {
  let serverCa: TestCa;
  let clientCa: TestCa;
  const servers: Server[] = [];
  const agents: Agent[] = [];
  beforeAll(async () => {
    serverCa = await createTestCa();
    clientCa = await createTestCa({ name: "client CA" });
  });
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  async function mutualServer(maxVersion: "TLSv1.2" | "TLSv1.3"): Promise<string> {
    const server = createServer(
      {
        ...(await serverCa.issueServer("localhost")),
        requestCert: true,
        rejectUnauthorized: true,
        ca: clientCa.pem,
        maxVersion,
      },
      (_req, res) => res.end("ok"),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `https://localhost:${(server.address() as AddressInfo).port}/mcp`;
  }

  async function attempt(url: string, identity?: { cert: string; key: string }): Promise<string> {
    const tls = originTls();
    const agent = new Agent({
      connect: tls.connector({ ca: [serverCa.pem], rejectUnauthorized: true, ...identity }),
    });
    agents.push(agent);
    try {
      const response = await request(url, { method: "POST", body: "{}", dispatcher: agent });
      return `HTTP ${response.statusCode} ${await response.body.text()}`;
    } catch (error) {
      return tls.explain(error, identity !== undefined);
    }
  }

  for (const version of ["TLSv1.3", "TLSv1.2"] as const) {
    it(`${version}: without a client certificate the handshake is named, and the fix`, async () => {
      const url = await mutualServer(version);
      expect(await attempt(url)).toMatch(
        /^the TLS handshake with the MCP server failed: .*start the connector with --client-cert and --client-key\)? \(ERR_SSL_/,
      );
      // A certificate of a CA it does not trust: refused (node's server drops the connection with
      // no alert, so the connector can only tell what it saw); one of its client CA is accepted.
      const stranger = await (await createTestCa({ name: "stranger" })).issueClient("connector");
      expect(await attempt(url, stranger)).not.toMatch(/^HTTP/);
      expect(await attempt(url, await clientCa.issueClient("connector"))).toBe("HTTP 200 ok");
    });
  }

  it("any other failure is told as it was", () => {
    const tls = originTls();
    const error = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(tls.explain(error, false)).toBe("connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)");
  });
});
