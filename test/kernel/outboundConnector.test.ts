import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolvedAddress } from "../../src/kernel/addressPolicy.js";
import { OutboundConnector, OutboundRefused, outboundRefusalOf } from "../../src/kernel/outboundConnector.js";
import { OutboundPolicy } from "../../src/kernel/outboundPolicy.js";

/**
 * The connector every host-made connection on a user's behalf goes through, against a real HTTP
 * server on 127.0.0.1 (the only address a test can reach): refused by default, reached only when
 * the operator's allow-list names it, and never by a second resolution or a redirect hop.
 */

let server: Server;
let port: number;
const seen: string[] = [];
const connectors: OutboundConnector[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    if (req.url?.startsWith("/redirect")) {
      const to = new URL(req.url, "http://x").searchParams.get("to") ?? "/";
      res.writeHead(307, { location: to });
      res.end();
      return;
    }
    // A new connection per request, so each request resolves (and is checked) again.
    res.writeHead(200, { "content-type": "text/plain", connection: "close" });
    res.end("the server's own answer");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function connector(options: ConstructorParameters<typeof OutboundConnector>[0] = {}): OutboundConnector {
  const c = new OutboundConnector(options);
  connectors.push(c);
  return c;
}

async function refusalOf(promise: Promise<unknown>): Promise<OutboundRefused> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  const refusal = outboundRefusalOf(error);
  if (!refusal) throw new Error(`expected an OutboundRefused, got ${String(error)}`);
  return refusal;
}

describe("OutboundConnector", () => {
  it("refuses the loopback by default, as a literal, a name and any URL spelling of it; nothing arrives", async () => {
    const c = connector({
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
    });
    const before = seen.length;
    for (const url of [
      `http://127.0.0.1:${port}/healthz`,
      `http://2130706433:${port}/`,
      `http://0177.0.0.1:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::1]:${port}/`,
      `http://localhost:${port}/`,
      `http://anything.example:${port}/`,
    ]) {
      const refusal = await refusalOf(c.fetch(url));
      expect(refusal.message).toMatch(/loopback, link-local, private or reserved address/);
      expect(refusal.message).toContain("--allow-private-mcp-host");
      expect(await c.admit(url)).toBeInstanceOf(OutboundRefused);
    }
    expect(seen.length).toBe(before);
  });

  it("refuses a name that resolves to a public and a private address (every address is checked)", async () => {
    const c = connector({
      resolve: async () => [
        { address: "93.184.216.34", family: 4 },
        { address: "10.0.0.7", family: 4 },
      ],
    });
    const refusal = await refusalOf(c.fetch(`http://mixed.example:${port}/`));
    expect(refusal.address).toBe("10.0.0.7");
    // The client-facing message names the host, not the private address it resolved to.
    expect(refusal.message).not.toContain("10.0.0.7");
    const metadata = connector({ resolve: async () => [{ address: "169.254.169.254", family: 4 }] });
    await refusalOf(metadata.fetch("http://metadata.example/latest/meta-data/"));
    const v6 = connector({ resolve: async () => [{ address: "fd00::1", family: 6 }] });
    await refusalOf(v6.fetch("http://ula.example/"));
  });

  it("reaches an allow-listed private address and returns its answer", async () => {
    const c = connector({ policy: OutboundPolicy.allowing("127.0.0.1") });
    const response = await c.fetch(`http://127.0.0.1:${port}/ok`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("the server's own answer");
    expect(await c.admit(`http://127.0.0.1:${port}/`)).toBeNull();
    // Listed as an address: another loopback address is still refused.
    await refusalOf(c.fetch(`http://127.0.0.2:${port}/`));
  });

  it("connects to the address it checked: a name that answers loopback the second time is not re-resolved", async () => {
    // DNS rebinding: the first answer passes the check, every later one is the forbidden loopback.
    let calls = 0;
    const resolve = async (): Promise<ResolvedAddress[]> => {
      calls += 1;
      return [{ address: calls === 1 ? "127.0.0.1" : "127.0.0.2", family: 4 }];
    };
    const c = connector({ policy: OutboundPolicy.allowing("127.0.0.1"), resolve });
    const response = await c.fetch(`http://rebind.example:${port}/first`);
    expect(await response.text()).toBe("the server's own answer");
    expect(calls).toBe(1); // checked and connected with one resolution
    // The server closed that connection: the next request resolves anew, and that answer is refused.
    const refusal = await refusalOf(c.fetch(`http://rebind.example:${port}/second`));
    expect(refusal.address).toBe("127.0.0.2");
    expect(calls).toBe(2);
    expect(seen).not.toContain(`rebind.example:${port} /second`);
  });

  it("checks every redirect hop: a hop to a host the policy refuses is not followed", async () => {
    const c = connector({
      policy: OutboundPolicy.allowing("127.0.0.1"),
      resolve: async (host) => [
        { address: host === "internal.example" ? "10.0.0.9" : "127.0.0.1", family: 4 },
      ],
    });
    const allowed = await c.fetch(`http://127.0.0.1:${port}/redirect?to=/landed`);
    expect(allowed.status).toBe(200);
    expect(seen.at(-1)).toBe(`127.0.0.1:${port} /landed`);
    for (const to of [`http://internal.example:${port}/secret`, "http://169.254.169.254/latest/meta-data/"]) {
      const before = seen.length;
      const target = encodeURIComponent(to);
      await refusalOf(c.fetch(`http://127.0.0.1:${port}/redirect?to=${target}`));
      expect(seen.slice(before)).toEqual([`127.0.0.1:${port} /redirect?to=${target}`]);
    }
  });
});
