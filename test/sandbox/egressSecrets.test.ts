import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SandboxCa } from "../../src/sandbox/egressCa.js";
import { EGRESS_SOCKET_NAME, EgressProxy, type ResolvedAddress } from "../../src/sandbox/egressProxy.js";
import { EgressSecrets } from "../../src/sandbox/egressSecrets.js";
import type { SandboxSecretVariable } from "../../src/sandbox/ports.js";

/**
 * The egress proxy's secret substitution, driven over its unix socket as the sandbox's relay does
 * (no bwrap here: test/e2e/secretEgress.test.ts runs the whole path). Upstreams are local servers
 * on the loopback, named *.test by an injected resolver and let through by an injected address
 * policy; the HTTPS upstream has a certificate of its own CA, which the proxy is told to trust
 * (`upstreamCa`, tests only), while the client trusts the sandbox's CA alone.
 */

const SECRET = "sk-live-planted-7f3a9c";
const resolve = async (host: string): Promise<ResolvedAddress[]> =>
  host.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : [];

interface Seen {
  host: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

let http: Server;
let https: HttpsServer;
let httpPort: number;
let httpsPort: number;
let upstreamCa: SandboxCa;
const seen: Seen[] = [];

function record(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    seen.push({ host: req.headers.host, headers: req.headers, body: Buffer.concat(chunks).toString() });
    // Never echoes what it got: the test looks at `seen`.
    res.end("ok");
  });
}

beforeAll(async () => {
  http = createServer(record);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  httpPort = (http.address() as AddressInfo).port;
  upstreamCa = await SandboxCa.create();
  https = createHttpsServer(
    {
      SNICallback: (name, cb) => {
        upstreamCa.contextFor(name).then(
          (context) => cb(null, context),
          (error: Error) => cb(error),
        );
      },
    },
    record,
  );
  await new Promise<void>((r) => https.listen(0, "127.0.0.1", r));
  httpsPort = (https.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => http.close(r));
  await new Promise((r) => https.close(r));
});

let proxy: EgressProxy;
let secrets: EgressSecrets;
let opened: Buffer[];
let refused: { secretName: string; host: string }[];
let openAllowed: boolean;

const VARIABLES: SandboxSecretVariable[] = [
  {
    secretName: "API_KEY",
    networking: { type: "limited", allowed_hosts: ["api.test", "*.wild.test", "forbidden.test"] },
    injection: { header: true, body: true },
  },
  {
    secretName: "HEADER_ONLY",
    networking: { type: "limited", allowed_hosts: ["api.test"] },
    injection: { header: true, body: false },
  },
];

async function startProxy(options: { trustUpstream: boolean }) {
  proxy = await EgressProxy.start(null, {
    resolve,
    allowAddress: (address) => address === "127.0.0.1",
    onRefusal: () => {},
    ...(options.trustUpstream ? { upstreamCa: [upstreamCa.certificatePem] } : {}),
  });
  proxy.setPolicy({ type: "limited", allowed_hosts: ["api.test", "other.test", "wild.test", "x.wild.test"] });
  secrets = await EgressSecrets.create(VARIABLES);
  secrets.bind({
    variables: VARIABLES,
    open: async () => {
      if (!openAllowed) return null;
      const value = Buffer.from(SECRET);
      opened.push(value);
      return value;
    },
    onHostRefused: (secretName, host) => refused.push({ secretName, host }),
    onUnusable: () => {},
  });
  proxy.useSecrets(secrets);
}

beforeEach(() => {
  seen.length = 0;
  opened = [];
  refused = [];
  openAllowed = true;
});
afterEach(async () => {
  await proxy?.close();
});

const placeholder = (name: string) => secrets.environment()[name] ?? "";
const socketPath = () => join(proxy.directory, EGRESS_SOCKET_NAME);

/** A plain-HTTP proxy request (absolute URI), as curl sends it through HTTP_PROXY. */
function viaProxy(
  url: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; text: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = request({ socketPath: socketPath(), method: "POST", path: url, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolvePromise({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** CONNECT through the proxy, then TLS trusting `ca` only, then one request inside. */
function viaTunnel(
  authority: string,
  ca: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; text: string; issuer: string }> {
  return new Promise((resolvePromise, reject) => {
    const connectReq = request({ socketPath: socketPath(), method: "CONNECT", path: authority });
    connectReq.on("error", reject);
    connectReq.on("connect", (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        resolvePromise({ status: res.statusCode ?? 0, text: "", issuer: "" });
        return;
      }
      const servername = authority.split(":")[0] ?? "";
      const tls: TLSSocket = tlsConnect({ socket, servername, ca: [ca] });
      tls.on("error", reject);
      tls.once("secureConnect", () => {
        const cn = tls.getPeerCertificate().issuer?.CN ?? "";
        const issuer = Array.isArray(cn) ? cn.join(",") : cn;
        const req = request(
          {
            createConnection: () => tls,
            method: "POST",
            path: "/v1/thing",
            headers: { host: servername, ...headers },
          },
          (inner) => {
            const chunks: Buffer[] = [];
            inner.on("data", (c: Buffer) => chunks.push(c));
            inner.on("end", () =>
              resolvePromise({
                status: inner.statusCode ?? 0,
                text: Buffer.concat(chunks).toString(),
                issuer,
              }),
            );
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    });
    connectReq.end();
  });
}

describe("plain HTTP: the secret goes only where its credential and the environment allow", () => {
  beforeEach(() => startProxy({ trustUpstream: false }));

  it("an allowed host gets the secret in headers and body; the opened Buffers are zeroed", async () => {
    const p = placeholder("API_KEY");
    const answer = await viaProxy(
      `http://api.test:${httpPort}/x`,
      { authorization: `Bearer ${p}`, "content-type": "application/json" },
      `{"key":"${p}"}`,
    );
    expect(answer).toEqual({ status: 200, text: "ok" });
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(seen[0]?.body).toBe(`{"key":"${SECRET}"}`);
    expect(seen[0]?.headers["content-length"]).toBe(String(Buffer.byteLength(`{"key":"${SECRET}"}`)));
    expect(opened.length).toBeGreaterThan(0);
    for (const buffer of opened) expect(buffer.every((byte) => byte === 0)).toBe(true);
  });

  it("a header-only credential leaves its placeholder in the body", async () => {
    const p = placeholder("HEADER_ONLY");
    await viaProxy(`http://api.test:${httpPort}/`, { "x-key": p }, `body ${p}`);
    expect(seen[0]?.headers["x-key"]).toBe(SECRET);
    expect(seen[0]?.body).toBe(`body ${p}`);
  });

  it("a host the environment allows but the credential does not gets the placeholder, and nothing is opened", async () => {
    const p = placeholder("API_KEY");
    await viaProxy(`http://other.test:${httpPort}/`, { authorization: `Bearer ${p}` }, p);
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${p}`);
    expect(seen[0]?.body).toBe(p);
    expect(opened).toEqual([]);
  });

  it("*.domain: a subdomain gets it, the apex does not", async () => {
    const p = placeholder("API_KEY");
    await viaProxy(`http://x.wild.test:${httpPort}/`, { "x-key": p });
    await viaProxy(`http://wild.test:${httpPort}/`, { "x-key": p });
    expect(seen.map((s) => s.headers["x-key"])).toEqual([SECRET, p]);
  });

  it("a credential host the environment forbids is refused (403) and reported; nothing is opened", async () => {
    const p = placeholder("API_KEY");
    const answer = await viaProxy(`http://forbidden.test:${httpPort}/`, { "x-key": p });
    expect(answer.status).toBe(403);
    expect(seen).toEqual([]);
    expect(opened).toEqual([]);
    expect(refused).toEqual([{ secretName: "API_KEY", host: "forbidden.test" }]);
  });

  it("a secret admission refuses is never replaced by anything: the request is refused", async () => {
    openAllowed = false;
    const answer = await viaProxy(`http://api.test:${httpPort}/`, { "x-key": placeholder("API_KEY") });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain("credential for API_KEY could not be used");
    expect(seen).toEqual([]);
  });
});

describe("HTTPS: TLS interception only for hosts with a substitution", () => {
  it("api.test is answered with the sandbox CA's leaf; the upstream (verified) sees the secret", async () => {
    await startProxy({ trustUpstream: true });
    const p = placeholder("API_KEY");
    const answer = await viaTunnel(
      `api.test:${httpsPort}`,
      secrets.ca.certificatePem,
      { authorization: `Bearer ${p}` },
      p,
    );
    expect(answer.status).toBe(200);
    expect(answer.text).toBe("ok");
    expect(answer.issuer).toContain("Awaken sandbox egress CA");
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(seen[0]?.body).toBe(SECRET);
    for (const buffer of opened) expect(buffer.every((byte) => byte === 0)).toBe(true);
  });

  it("other.test stays an opaque tunnel: the client sees the upstream's own certificate", async () => {
    await startProxy({ trustUpstream: true });
    const p = placeholder("API_KEY");
    const answer = await viaTunnel(`other.test:${httpsPort}`, upstreamCa.certificatePem, { "x-key": p });
    expect(answer.status).toBe(200);
    expect(answer.issuer).not.toBe("");
    expect(seen[0]?.headers["x-key"]).toBe(p);
    expect(opened).toEqual([]);
  });

  it("the upstream certificate is verified: one the proxy does not trust fails the request (502), no secret sent", async () => {
    await startProxy({ trustUpstream: false });
    const answer = await viaTunnel(`api.test:${httpsPort}`, secrets.ca.certificatePem, {
      "x-key": placeholder("API_KEY"),
    });
    expect(answer.status).toBe(502);
    expect(seen).toEqual([]);
    for (const buffer of opened) expect(buffer.every((byte) => byte === 0)).toBe(true);
  });
});
