import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { SandboxCa } from "../../src/sandbox/egressCa.js";
import { MODEL, textOf, userMessage, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { TEST_API_KEY } from "../support/testServer.js";
import { plantedSecret, recordingClient } from "../support/vaultServer.js";

/**
 * Vault `environment_variable` credentials end to end (wire §5), through the official SDK: a bash
 * call in the session's bwrap sandbox runs curl with `$API_TOKEN` in a header to an HTTPS upstream;
 * the sandbox only ever holds a placeholder, the egress proxy substitutes the secret for the
 * allowed host (TLS interception with the sandbox's own CA), the upstream sees the secret, and no
 * tool result, event, log line, row or data-dir byte holds it. A credential host the environment
 * forbids surfaces as `session.error` `credential_host_unreachable_error`, and the turn ends
 * cleanly. No internet here: the upstream listens on the loopback as `api.test`, which the
 * server's egress proxies are told to resolve and let through (test-only options, like
 * test/sandbox/egress.test.ts), and to trust its certificate's CA.
 */

const SECRET = plantedSecret("egress");
/** The same variable in a vault listed second: never pinned, so never opened or sent anywhere. */
const SECOND = plantedSecret("egress-second");
const TOOLSET = { type: "agent_toolset_20260401" as const };

let server: RunningServer;
let client: Anthropic;
let dataDir: string;
let upstream: HttpsServer;
let port: number;
const logs: string[] = [];
const bodies: string[] = [];
const upstreamSaw: {
  host: string | undefined;
  authorization: string | undefined;
  token: string | undefined;
}[] = [];

beforeAll(async () => {
  const upstreamCa = await SandboxCa.create();
  upstream = createHttpsServer(
    {
      SNICallback: (name, cb) => {
        upstreamCa.contextFor(name).then(
          (context) => cb(null, context),
          (error: Error) => cb(error),
        );
      },
    },
    (req, res) => {
      const token = req.headers["x-token"];
      upstreamSaw.push({
        host: req.headers.host,
        authorization: req.headers.authorization,
        token: Array.isArray(token) ? token.join(",") : token,
      });
      // Never echoes the header: what it saw is checked here, not in the tool result.
      res.end("upstream-ok");
    },
  );
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  port = (upstream.address() as AddressInfo).port;

  dataDir = mkdtempSync(join(tmpdir(), "awaken-secret-egress-"));
  // The data dir stays 0700 as mkdtemp made it: sandboxes reach their workspaces all the same.
  server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 2,
      workerPollMs: 50,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: TEST_API_KEY,
      retry: {},
      // One case runs on tier "none" (no egress proxy there): the operator option enables it.
      allowWeakerTiers: true,
      env: {},
      sandboxEgress: {
        resolve: async (host) => (host.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : []),
        allowAddress: (address) => address === "127.0.0.1",
        upstreamCa: [upstreamCa.certificatePem],
        onRefusal: () => {},
      },
    },
    pino({ level: "trace" }, { write: (line: string) => logs.push(line) }),
  );
  client = recordingClient(server.url, bodies);
});
afterAll(async () => {
  await server?.stop();
  await new Promise((r) => upstream?.close(r));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function sessionWithSecret(tier: "bwrap" | "none") {
  const vault = await client.beta.vaults.create({ display_name: `egress-${tier}` });
  const credential = await client.beta.vaults.credentials.create(vault.id, {
    auth: {
      type: "environment_variable",
      secret_name: "API_TOKEN",
      secret_value: SECRET,
      networking: { type: "limited", allowed_hosts: ["api.test", "forbidden.test"] },
      injection_location: { header: true, body: false },
    },
  });
  const agent = await client.beta.agents.create({ name: "egress", model: MODEL, tools: [TOOLSET] as never });
  const environment = await client.beta.environments.create({
    name: `egress-${tier}`,
    config: {
      type: "cloud",
      networking: { type: "limited", allowed_hosts: ["api.test"] },
      sandbox: { tier },
    } as never,
  });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    vault_ids: [vault.id],
  } as never);
  return { vault, credential, session };
}

async function bash(sessionId: string, command: string): Promise<{ events: WireEvent[]; result: string }> {
  const ends = async () =>
    (await all(sessionId)).filter(
      (e) => e.type === "session.status_idle" && (e.stop_reason as { type: string }).type === "end_turn",
    ).length;
  const before = await ends();
  await client.beta.sessions.events.send(sessionId, {
    events: [userMessage(`call bash ${JSON.stringify({ command })}`)],
  });
  const events = await waitForHistory(
    client,
    sessionId,
    (h) =>
      h.filter(
        (e) => e.type === "session.status_idle" && (e.stop_reason as { type: string }).type === "end_turn",
      ).length > before,
    30_000,
  );
  const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
  return { events, result: textOf(result) };
}

async function all(sessionId: string): Promise<WireEvent[]> {
  const out: WireEvent[] = [];
  for await (const event of client.beta.sessions.events.list(sessionId, { limit: 1000 })) {
    out.push(event as unknown as WireEvent);
  }
  return out;
}

const unreachable = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "session.error")
    .map((e) => e.error as Record<string, unknown>)
    .filter((error) => error.type === "credential_host_unreachable_error");

describe("environment_variable credentials in a bwrap sandbox", () => {
  let ids: Awaited<ReturnType<typeof sessionWithSecret>>;
  beforeAll(async () => {
    ids = await sessionWithSecret("bwrap");
  });

  it("curl with $API_TOKEN: the upstream gets the secret, the sandbox and the model see a placeholder", async () => {
    const { result, events } = await bash(
      ids.session.id,
      `curl -sS -H "Authorization: Bearer $API_TOKEN" https://api.test:${port}/v1/me; echo; echo "token=$API_TOKEN"`,
    );
    expect(result).toContain("upstream-ok");
    expect(result).toMatch(/token=awaken-secret-[0-9a-f]{32}/);
    expect(result).not.toContain(SECRET);
    expect(upstreamSaw.at(-1)).toMatchObject({ host: `api.test:${port}`, authorization: `Bearer ${SECRET}` });
    // forbidden.test is one of the credential's hosts the environment does not allow: said once.
    const errors = unreachable(events);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      credential_id: ids.credential.id,
      vault_id: ids.vault.id,
      retry_status: { type: "retrying" },
    });
    expect(String(errors[0]?.message)).toContain("forbidden.test");
    // The open was admitted and audited for the egress proxy, under this run's claim.
    const sql = new SqliteDatabase(join(dataDir, "awaken.db"), { readonly: true });
    try {
      const opens = sql
        .prepare("select holder, outcome, usage_key from credential_opens where session_id = ?")
        .all(ids.session.id) as { holder: string; outcome: string; usage_key: string }[];
      expect(opens).toContainEqual({ holder: "egress_proxy", outcome: "opened", usage_key: "env:API_TOKEN" });
    } finally {
      sql.close();
    }
  });

  it("a request to a credential host the environment forbids: refused, session.error, the turn ends cleanly", async () => {
    const seenBefore = upstreamSaw.length;
    const { result, events } = await bash(
      ids.session.id,
      `curl -sS -o /dev/null -w 'code=%{http_code}' -H "Authorization: Bearer $API_TOKEN" https://forbidden.test:${port}/ 2>&1; echo`,
    );
    expect(result).not.toContain(SECRET);
    expect(upstreamSaw.length).toBe(seenBefore);
    const errors = unreachable(events);
    const requestTime = errors.filter((e) => String(e.message).includes("a request to forbidden.test"));
    expect(requestTime).toHaveLength(1);
    expect(requestTime[0]).toMatchObject({ credential_id: ids.credential.id, vault_id: ids.vault.id });
    expect(events.at(-1)).toMatchObject({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
  });
});

describe("pinning and admission", () => {
  it("the first vault listed wins per variable; an archived credential is refused (audited) and never sent", async () => {
    const make = async (value: string) => {
      const vault = await client.beta.vaults.create({ display_name: "order" });
      const credential = await client.beta.vaults.credentials.create(vault.id, {
        auth: {
          type: "environment_variable",
          secret_name: "ORDER_TOKEN",
          secret_value: value,
          networking: { type: "limited", allowed_hosts: ["api.test"] },
          injection_location: { header: true, body: false },
        },
      });
      return { vault, credential };
    };
    const first = await make(SECRET);
    const other = await make(SECOND);
    const agent = await client.beta.agents.create({ name: "order", model: MODEL, tools: [TOOLSET] as never });
    const environment = await client.beta.environments.create({
      name: "order",
      config: { type: "cloud", networking: { type: "unrestricted" }, sandbox: { tier: "bwrap" } } as never,
    });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      vault_ids: [first.vault.id, other.vault.id],
    } as never);
    const command = `curl -sS -H "X-Token: $ORDER_TOKEN" https://api.test:${port}/; echo`;
    const used = await bash(session.id, command);
    expect(used.result).toContain("upstream-ok");
    expect(upstreamSaw.at(-1)?.token).toBe(SECRET);
    const sawFirst = upstreamSaw.length;
    // No unreachable host here (unrestricted environment): no session.error.
    expect(unreachable(used.events)).toEqual([]);

    await client.beta.vaults.credentials.archive(first.credential.id, { vault_id: first.vault.id });
    const refused = await bash(session.id, command);
    expect(refused.result).toContain(
      "sandbox egress refused: the credential for ORDER_TOKEN could not be used",
    );
    expect(refused.result).not.toContain(SECOND);
    expect(upstreamSaw.length).toBe(sawFirst);
    const sql = new SqliteDatabase(join(dataDir, "awaken.db"), { readonly: true });
    try {
      const opens = sql
        .prepare(
          "select credential_id, holder, outcome, reason from credential_opens where session_id = ? order by created_at, id",
        )
        .all(session.id) as {
        credential_id: string;
        holder: string;
        outcome: string;
        reason: string | null;
      }[];
      expect(opens.map((o) => [o.credential_id, o.holder, o.outcome])).toEqual([
        [first.credential.id, "egress_proxy", "opened"],
        [first.credential.id, "egress_proxy", "refused"],
      ]);
      expect(opens[1]?.reason).toContain("archived");
    } finally {
      sql.close();
    }
  });
});

describe("environment_variable credentials on the none tier", () => {
  it("the variable is not set (no proxy could substitute it) and a session.error says why", async () => {
    const ids = await sessionWithSecret("none");
    const { result, events } = await bash(ids.session.id, 'if [ -z "$API_TOKEN" ]; then echo unset; fi');
    expect(result).toContain("unset");
    const errors = unreachable(events);
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.message)).toContain('"none" sandbox tier has no egress proxy');
    expect(events.at(-1)).toMatchObject({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return [];
    return stat.isDirectory() ? filesUnder(path) : stat.isFile() ? [path] : [];
  });
}

describe("the planted secret, zero hits", () => {
  it("no response body, log line or data-dir byte holds it (the upstream did get it)", () => {
    expect(upstreamSaw.some((s) => s.authorization === `Bearer ${SECRET}`)).toBe(true);
    expect(bodies.length).toBeGreaterThan(0);
    expect(upstreamSaw.some((s) => s.token === SECOND)).toBe(false);
    for (const secret of [SECRET, SECOND]) {
      expect(bodies.filter((body) => body.includes(secret))).toEqual([]);
      expect(logs.filter((line) => line.includes(secret))).toEqual([]);
      const needle = Buffer.from(secret);
      expect(filesUnder(dataDir).filter((path) => readFileSync(path).includes(needle))).toEqual([]);
    }
    expect(logs.length).toBeGreaterThan(0);
  });
});
