import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BwrapSandbox, BwrapTierProvider, bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import {
  allowedHostsOf,
  type EgressProxyOptions,
  type EgressRefusal,
  hostAllowed,
  PACKAGE_REGISTRY_HOSTS,
  type ResolvedAddress,
} from "../../src/sandbox/egressProxy.js";
import type { SandboxSpec } from "../../src/sandbox/ports.js";

/**
 * `networking` for the bwrap tier: no egress but through the sandbox's host proxy (egressProxy.ts),
 * reached through the supervisor's relay on 127.0.0.1:3128 inside. Real bwrap, real curl; no
 * internet here, so the upstream is a local server on the host's loopback, named by an injected
 * resolver and let through by an injected address policy in the tests that need to reach it.
 */

describe("allowed_hosts matching", () => {
  it("matches exact names and IPv4, and *.domain subdomains but not the apex", () => {
    const allowed = ["api.example.com", "*.pypi.org", "93.184.216.34"];
    expect(hostAllowed("api.example.com", allowed)).toBe(true);
    expect(hostAllowed("API.Example.com.", allowed)).toBe(true);
    expect(hostAllowed("example.com", allowed)).toBe(false);
    expect(hostAllowed("x.api.example.com", allowed)).toBe(false);
    expect(hostAllowed("files.pypi.org", allowed)).toBe(true);
    expect(hostAllowed("a.b.pypi.org", allowed)).toBe(true);
    expect(hostAllowed("pypi.org", allowed)).toBe(false);
    expect(hostAllowed("evilpypi.org", allowed)).toBe(false);
    expect(hostAllowed("93.184.216.34", allowed)).toBe(true);
    expect(hostAllowed("93.184.216.35", allowed)).toBe(false);
    expect(hostAllowed("", allowed)).toBe(false);
  });
});

describe("allow_package_managers", () => {
  it("adds the public package registries to allowed_hosts, and nothing without it", () => {
    const base = { type: "limited" as const, allowed_hosts: ["api.example.com"] };
    expect(allowedHostsOf(base)).toEqual(["api.example.com"]);
    expect(allowedHostsOf({ ...base, allow_package_managers: false })).toEqual(["api.example.com"]);
    const withRegistries = allowedHostsOf({ ...base, allow_package_managers: true });
    expect(withRegistries).toEqual(["api.example.com", ...PACKAGE_REGISTRY_HOSTS]);
    for (const host of ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "index.crates.io"]) {
      expect([host, hostAllowed(host, withRegistries)]).toEqual([host, true]);
    }
  });
});

const IS_ROOT = process.getuid?.() === 0;
let installed = false;
let root: string;
let upstream: Server;
let port: number;
const providers: BwrapTierProvider[] = [];
const refusals: EgressRefusal[] = [];
const BIG_BYTES = 8 * 2 ** 20;

/** Test names → the host's loopback (where the local upstream server listens). */
const testResolver = async (host: string): Promise<ResolvedAddress[]> => {
  if (host.endsWith(".test")) return [{ address: "127.0.0.1", family: 4 }];
  throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
};

function newProvider(name: string, first: number, egress: EgressProxyOptions, poolSize = 0) {
  const provider = new BwrapTierProvider({
    workspaceRoot: join(root, name),
    uidRange: { first, last: first + 49 },
    poolSize,
    egress: { onRefusal: (refusal) => refusals.push(refusal), ...egress },
  });
  providers.push(provider);
  return provider;
}

const limited = (sessionId: string, allowed_hosts: string[]): SandboxSpec => ({
  tier: "bwrap",
  sessionId,
  networking: { type: "limited", allowed_hosts },
});

function run(target: BwrapSandbox, script: string, timeoutMs = 15_000) {
  return target.exec({
    argv: ["bash", "-c", script],
    timeoutMs,
    maxOutputBytes: 1_000_000,
    signal: new AbortController().signal,
  });
}

/** curl's status line: the HTTP code (000 when none), then the body or curl's error. */
const curl = (args: string) => `curl -sS --max-time 5 -w '\\n%{http_code}' ${args} 2>&1; true`;

beforeAll(async () => {
  installed = await bwrapAvailable();
  if (!installed) return;
  root = await mkdtemp(join(tmpdir(), "bwrap-egress-"));
  // Left 0700 as mkdtemp made it: sandboxes reach their workspaces under a closed parent.
  upstream = createServer((req, res) => {
    if (req.url === "/big") {
      res.writeHead(200, { "Content-Type": "application/octet-stream" });
      res.end(Buffer.alloc(BIG_BYTES, 7));
      return;
    }
    if (req.method === "POST") {
      let received = 0;
      req.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
      req.on("end", () => res.end(`received ${received}`));
      return;
    }
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end(`hello from upstream: ${req.method} ${req.url} host=${req.headers.host}`);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  port = (upstream.address() as AddressInfo).port;
});

beforeEach(() => {
  if (!installed) throw new Error("bubblewrap is not installed on this host (apt-get install -y bubblewrap)");
  refusals.length = 0;
});

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  await new Promise((resolve) => upstream?.close(resolve));
  if (root) await rm(root, { recursive: true, force: true });
});

describe("bwrap egress: networking limited", () => {
  let sandbox: BwrapSandbox;

  beforeAll(async () => {
    if (!installed) return;
    // Test-only address policy: the local upstream (127.0.0.1) stands in for a public server.
    const provider = newProvider("limited", 236_000, {
      resolve: testResolver,
      allowAddress: (address) => address === "127.0.0.1",
    });
    sandbox = await provider.realize(limited("s-limited", ["allowed.test", "*.wild.test"]));
  });

  it("gives commands the proxy variables and no NO_PROXY", async () => {
    const result = await run(sandbox, "env | grep -i proxy | sort");
    expect(result.stdout.split("\n").filter(Boolean)).toEqual([
      "HTTPS_PROXY=http://127.0.0.1:3128",
      "HTTP_PROXY=http://127.0.0.1:3128",
      "http_proxy=http://127.0.0.1:3128",
      "https_proxy=http://127.0.0.1:3128",
    ]);
  });

  it("reaches an allowed host through the proxy, plain HTTP and CONNECT alike", async () => {
    const plain = await run(sandbox, curl(`http://allowed.test:${port}/plain`));
    expect(plain.stdout).toBe(`hello from upstream: GET /plain host=allowed.test:${port}\n200`);
    const tunnel = await run(sandbox, curl(`--proxytunnel http://allowed.test:${port}/tunnel`));
    expect(tunnel.stdout).toBe(`hello from upstream: GET /tunnel host=allowed.test:${port}\n200`);
    const wildcard = await run(sandbox, curl(`--proxytunnel http://a.wild.test:${port}/w`));
    expect(wildcard.stdout).toContain("hello from upstream: GET /w");
    expect(refusals).toEqual([]);
  });

  it("answers 403 with its reason for a host not in allowed_hosts, and logs it", async () => {
    const plain = await run(sandbox, curl(`http://other.test:${port}/`));
    expect(plain.stdout).toBe(
      "sandbox egress refused: other.test is not in the environment's allowed_hosts\n\n403",
    );
    const apex = await run(sandbox, curl(`--proxytunnel http://wild.test:${port}/`));
    expect(apex.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    expect(refusals).toEqual([
      { host: "other.test", port, reason: "other.test is not in the environment's allowed_hosts" },
      { host: "wild.test", port, reason: "wild.test is not in the environment's allowed_hosts" },
    ]);
  });

  it("has no direct route: the host's loopback stays unreachable without the proxy", async () => {
    const viaCurl = await run(sandbox, curl(`--noproxy '*' http://127.0.0.1:${port}/`));
    expect(viaCurl.stdout).toMatch(/Failed to connect|Couldn't connect/);
    expect(viaCurl.stdout).toMatch(/000$/);
    const viaBash = await run(
      sandbox,
      `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected || echo refused`,
    );
    expect(viaBash.stdout).toBe("refused\n");
    const interfaces = await run(sandbox, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '");
    expect(interfaces.stdout).toBe("lo\n");
  });

  it("relays large bodies both ways", async () => {
    const down = await run(
      sandbox,
      `curl -sS --max-time 10 --proxytunnel -o /dev/null -w '%{size_download} %{http_code}' http://allowed.test:${port}/big`,
    );
    expect(down.stdout).toBe(`${BIG_BYTES} 200`);
    const up = await run(
      sandbox,
      `head -c 3000000 /dev/zero > /tmp/up && curl -sS --max-time 10 --data-binary @/tmp/up http://allowed.test:${port}/up`,
    );
    expect(up.stdout).toBe("received 3000000");
  });

  it("a command that stops reading its connection does not hold up the supervisor", async () => {
    const started = Date.now();
    const stalled = await run(
      sandbox,
      `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'GET http://allowed.test:${port}/big HTTP/1.0\r\n\r\n' >&3; sleep 30`,
      1_500,
    );
    expect(stalled.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sandbox.process?.alive).toBe(true);
    const next = await run(sandbox, curl(`http://allowed.test:${port}/next`));
    expect(next.stdout).toContain("hello from upstream: GET /next");
  });

  it("a command run while another runs (a one-shot sandbox) has the same egress", async () => {
    const long = run(sandbox, "sleep 1.5; echo long done");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const concurrent = await run(sandbox, curl(`--proxytunnel http://allowed.test:${port}/concurrent`));
    expect(concurrent.stdout).toContain("hello from upstream: GET /concurrent");
    const refused = await run(sandbox, curl(`http://other.test:${port}/`));
    expect(refused.stdout).toMatch(/403$/);
    expect((await long).stdout).toBe("long done\n");
  });

  it("closes what a command left of its connections when it ends; the next command connects again", async () => {
    const first = await run(sandbox, `exec 3<>/dev/tcp/127.0.0.1/3128; sleep 0.2 & echo started`);
    expect(first.stdout).toBe("started\n");
    const again = await run(sandbox, curl(`http://allowed.test:${port}/again`));
    expect(again.stdout).toContain("hello from upstream: GET /again");
  });
});

describe("bwrap egress: the product's address policy", () => {
  let provider: BwrapTierProvider;

  beforeAll(async () => {
    if (!installed) return;
    // Default allowAddress (public addresses only); the test resolver maps *.test to 127.0.0.1.
    provider = newProvider("default-policy", 236_100, { resolve: testResolver });
  });

  it("refuses an allowlisted name resolving to loopback, and loopback or metadata literals", async () => {
    const sandbox = await provider.realize(
      limited("s-default", ["loopback.test", "127.0.0.1", "169.254.169.254", "localhost"]),
    );
    const named = await run(sandbox, curl(`--proxytunnel http://loopback.test:${port}/`));
    expect(named.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    const literal = await run(sandbox, curl(`http://127.0.0.1:${port}/`));
    expect(literal.stdout).toMatch(/resolves to 127\.0\.0\.1, a loopback.*\n\n403$/);
    const metadata = await run(sandbox, curl("http://169.254.169.254/latest/meta-data/"));
    expect(metadata.stdout).toMatch(/403$/);
    expect(refusals.map((refusal) => refusal.reason)).toEqual([
      "loopback.test resolves to 127.0.0.1, a loopback, link-local, private or reserved address",
      "127.0.0.1 resolves to 127.0.0.1, a loopback, link-local, private or reserved address",
      "169.254.169.254 resolves to 169.254.169.254, a loopback, link-local, private or reserved address",
    ]);
  });

  it("unrestricted: any host, but never a loopback, link-local or private address", async () => {
    const sandbox = await provider.realize({
      tier: "bwrap",
      sessionId: "s-unrestricted",
      networking: { type: "unrestricted" },
    });
    const named = await run(sandbox, curl(`http://anything.test:${port}/`));
    expect(named.stdout).toMatch(/anything\.test resolves to 127\.0\.0\.1.*\n\n403$/);
    const unresolved = await run(sandbox, curl("http://nowhere.invalid/"));
    expect(unresolved.stdout).toMatch(/nowhere\.invalid does not resolve.*\n\n403$/);
  });
});

describe("bwrap egress: unrestricted and pooled sandboxes", () => {
  it("unrestricted lets any host through (address policy aside); a pooled sandbox gets its session's policy", async () => {
    const provider = newProvider(
      "pooled",
      236_200,
      { resolve: testResolver, allowAddress: (address) => address === "127.0.0.1" },
      1,
    );
    await provider.warm();
    expect(provider.pooled).toBe(1);
    const open = await provider.realize({
      tier: "bwrap",
      sessionId: "s-open",
      networking: { type: "unrestricted" },
    });
    const any = await run(open, curl(`--proxytunnel http://whatever.test:${port}/any`));
    expect(any.stdout).toContain("hello from upstream: GET /any");
    const narrow = await provider.realize(limited("s-narrow", ["only.test"]));
    const allowed = await run(narrow, curl(`http://only.test:${port}/`));
    expect(allowed.stdout).toMatch(/200$/);
    const refused = await run(narrow, curl(`http://whatever.test:${port}/`));
    expect(refused.stdout).toMatch(/403$/);
  });

  it.runIf(IS_ROOT)("keeps the proxy socket private to the sandbox's uid", async () => {
    const provider = newProvider("owner", 236_300, { resolve: testResolver });
    const sandbox = await provider.realize(limited("s-owner", []));
    const result = await run(sandbox, "stat -c '%a %U' /run/awaken-egress /run/awaken-egress/proxy.sock");
    expect(result.stdout).toBe("700 sandbox\n600 sandbox\n");
    const readOnly = await run(sandbox, "rm -f /run/awaken-egress/proxy.sock 2>&1; echo $?");
    expect(readOnly.stdout).toMatch(/Read-only file system\n1\n$/);
  });
});
