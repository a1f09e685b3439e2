/**
 * `environment_variable` credentials on remote workers: a coordinator with no in-process
 * workers (`--workers 0`), one `awaken worker` child process whose bwrap sandbox runs a bash call
 * that curls an HTTPS upstream with `$API_TOKEN` in a header. The worker learns the session's
 * pinned variables (secret-free) and its egress proxy opens the secret through the worker
 * transport (`/credentials/secret-variables`, `/credentials/open-secret`), each behind the live
 * claim check: the sandbox and the model see a placeholder, the upstream sees the secret, the open
 * is audited under the worker's claim, a claim that is not live gets `claim_lost` with nothing
 * read, opened or audited, and the secret is in no API response and no log line of either process
 * (trace level; as text and as the base64 it travels in). SQLite and PostgreSQL (the latter
 * skipped outside CI without AWAKEN_TEST_DATABASE_URL).
 *
 * No internet: the upstream listens on the loopback as `api.test`; the worker runs the same
 * `awaken worker` command from a test entry (test/support/egressWorkerEntry.mjs) that gives its
 * egress proxies the test-only resolver, loopback allowance and upstream CA, exactly as
 * test/e2e/secretEgress.test.ts gives them to the in-process server.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxCa } from "../../src/sandbox/egressCa.js";
import { credentialOpens } from "../support/credentialAudit.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  history,
  MODEL,
  stopReason,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { plantedSecret, recordingClient } from "../support/vaultServer.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const KEY = "sk-awaken-remote-secret-egress-test";
const TOKEN = "worker-token-remote-secret-egress-01234";
const ROUTES = {
  variables: "/v1/awaken/worker/credentials/secret-variables",
  open: "/v1/awaken/worker/credentials/open-secret",
};
const ENTRY = fileURLToPath(new URL("../support/egressWorkerEntry.mjs", import.meta.url));
const TOOLSET = { type: "agent_toolset_20260401" as const };

const endedTurns = (events: WireEvent[]) =>
  events.filter((e) => e.type === "session.status_idle" && stopReason(e)?.type !== "requires_action");
const unreachable = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "session.error")
    .map((e) => e.error as Record<string, unknown>)
    .filter((error) => error.type === "credential_host_unreachable_error");

function remoteSecretSuite(backend: "sqlite" | "postgres") {
  let dataDir: string;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let server: ServerProcess;
  let worker: WorkerProcess;
  let identity: string;
  let client: Anthropic;
  let upstream: HttpsServer;
  let port: number;
  let environmentId: string;
  /** Every secret this suite planted: none may appear in an API response or a log line. */
  const planted: string[] = [];
  /** Every Managed Agents API response body the test's SDK client received. */
  const bodies: string[] = [];
  const upstreamSaw: { path: string | undefined; authorization: string | undefined }[] = [];
  /** While set, requests to `/hold` wait for it: the run stays inside its tool call, claim live. */
  let held: { release: () => void; done: Promise<void> } | null = null;

  beforeAll(async () => {
    const ca = await SandboxCa.create();
    upstream = createHttpsServer(
      {
        SNICallback: (name, cb) => {
          ca.contextFor(name).then(
            (context) => cb(null, context),
            (error: Error) => cb(error),
          );
        },
      },
      (req, res) => {
        upstreamSaw.push({ path: req.url, authorization: req.headers.authorization });
        // Never echoes the header: what it saw is checked here, not in the tool result.
        const answer = () => res.end("upstream-ok");
        if (req.url === "/hold" && held) held.done.then(answer);
        else answer();
      },
    );
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    port = (upstream.address() as AddressInfo).port;

    dataDir = mkdtempSync(join(tmpdir(), `awaken-remote-egress-${backend}-`));
    const workspaces = join(dataDir, "worker-workspaces");
    // The 0700 dirs stay closed: sandboxes reach their workspaces all the same.
    const caFile = join(dataDir, "upstream-ca.pem");
    writeFileSync(caFile, ca.certificatePem);

    schema = backend === "postgres" ? await emptySchema() : undefined;
    server = await startServerProcess({
      dataDir,
      apiKey: KEY,
      env: { AWAKEN_WORKER_TOKEN: TOKEN, AWAKEN_LOG_LEVEL: "trace" },
      args: ["--workers", "0", ...(schema ? ["--database-url", schema.url] : [])],
    });
    worker = await startWorker(
      server.url,
      TOKEN,
      { AWAKEN_LOG_LEVEL: "trace", AWAKEN_TEST_UPSTREAM_CA_FILE: caFile },
      ["--workspace-dir", workspaces],
      [ENTRY],
    );
    identity = /Awaken worker (\S+) is running/.exec(worker.stdout())![1]!;
    client = recordingClient(server.url, bodies, KEY);
    const environment = await client.beta.environments.create({
      name: "remote-egress",
      config: {
        type: "cloud",
        networking: { type: "limited", allowed_hosts: ["api.test"] },
        sandbox: { tier: "bwrap" },
      } as never,
    });
    environmentId = environment.id;
  }, 60_000);

  afterAll(async () => {
    held?.release();
    // SIGTERM first: the worker closes its sandboxes and their egress proxies.
    if (worker && worker.child.exitCode === null) worker.child.kill("SIGTERM");
    const stopped = await Promise.race([worker?.exited, new Promise((r) => setTimeout(r, 8_000))]);
    for (const p of [worker, server]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
    await Promise.all([stopped === undefined ? worker?.exited : null, server?.exited]);
    await new Promise((r) => upstream?.close(r));
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  async function sessionWithSecret() {
    const secret = plantedSecret(`remote-egress-${backend}`);
    planted.push(secret);
    const vault = await client.beta.vaults.create({ display_name: "remote-egress" });
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "environment_variable",
        secret_name: "API_TOKEN",
        secret_value: secret,
        networking: { type: "limited", allowed_hosts: ["api.test", "forbidden.test"] },
        injection_location: { header: true, body: false },
      },
    });
    const agent = await client.beta.agents.create({
      name: "egress",
      model: MODEL,
      tools: [TOOLSET] as never,
    });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
      vault_ids: [vault.id],
    } as never);
    return { secret, vault, credential, session };
  }

  /** Sends one bash call; `ended` waits for that turn to end. */
  async function bash(sessionId: string, command: string) {
    const before = endedTurns(await history(client, sessionId)).length;
    await client.beta.sessions.events.send(sessionId, {
      events: [userMessage(`call bash ${JSON.stringify({ command })}`)],
    });
    const ended = () => waitForHistory(client, sessionId, (h) => endedTurns(h).length > before, 40_000);
    return { ended };
  }

  const opens = (sessionId: string) =>
    credentialOpens({ schemaUrl: schema?.url ?? null, dataDir }, sessionId);

  const post = (path: string, body: unknown, authorization: string | null = `Bearer ${TOKEN}`) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization === null ? {} : { authorization }) },
      body: JSON.stringify(body),
    });

  it("curl with $API_TOKEN in the remote worker's sandbox: the upstream gets the secret, the sandbox a placeholder", async () => {
    const { secret, vault, credential, session } = await sessionWithSecret();
    const turn = await bash(
      session.id,
      `curl -sS -H "Authorization: Bearer $API_TOKEN" https://api.test:${port}/v1/me; echo; echo "token=$API_TOKEN"`,
    );
    const events = await turn.ended();
    const result = textOf(events.filter((e) => e.type === "agent.tool_result").at(-1));
    expect(result).toContain("upstream-ok");
    expect(result).toMatch(/token=awaken-secret-[0-9a-f]{32}/);
    expect(result).not.toContain(secret);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(upstreamSaw.at(-1)).toEqual({ path: "/v1/me", authorization: `Bearer ${secret}` });
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });
    // As in process: forbidden.test is a credential host the environment does not allow.
    const errors = unreachable(events);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ credential_id: credential.id, vault_id: vault.id });
    // Admitted and audited on the coordinator, under the remote worker's claim.
    const audit = await opens(session.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      credential_id: credential.id,
      revision: 1,
      holder: "egress_proxy",
      usage_key: "env:API_TOKEN",
      outcome: "opened",
      reason: null,
    });
    expect(audit[0]!.owner.startsWith(`${identity}/`)).toBe(true);
  }, 60_000);

  it("a claim that is not live gets claim_lost on both routes; nothing is read, opened or audited", async () => {
    const other = await sessionWithSecret();
    const { secret, credential, session } = await sessionWithSecret();
    let release = () => {};
    const done = new Promise<void>((r) => {
      release = r;
    });
    held = { release, done };
    let turn: Awaited<ReturnType<typeof bash>> | undefined;
    try {
      const before = upstreamSaw.length;
      turn = await bash(
        session.id,
        `curl -sS -H "Authorization: Bearer $API_TOKEN" https://api.test:${port}/hold`,
      );
      const deadline = Date.now() + 30_000;
      while (!upstreamSaw.slice(before).some((s) => s.path === "/hold")) {
        if (Date.now() > deadline)
          throw new Error(`the sandbox never reached the upstream:\n${worker.stderr()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      // The proxy opened the secret before it forwarded the request: that row names the live claim.
      const [live] = await opens(session.id);
      expect(live).toMatchObject({ outcome: "opened", holder: "egress_proxy" });
      const claim = {
        workspaceId: live!.workspace_id,
        sessionId: session.id,
        runId: live!.run_id,
        owner: live!.owner,
        epoch: live!.epoch,
      };
      const request = { ...claim, holder: "egress_proxy", secretName: "API_TOKEN" };
      const stale = [
        { epoch: claim.epoch + 1 },
        { owner: "intruder/0" },
        { owner: `${claim.owner}x` },
        // A live claim, presented for another session's secret.
        { sessionId: other.session.id },
        { runId: "run_does_not_exist" },
      ];
      for (const change of stale) {
        for (const [path, body] of [
          [ROUTES.variables, { ...claim, ...change }],
          [ROUTES.open, { ...request, ...change }],
        ] as const) {
          const response = await post(path, body);
          expect(response.status).toBe(200);
          const answer = (await response.json()) as Record<string, unknown>;
          expect(answer).toMatchObject({ kind: "claim_lost" });
          expect(Object.keys(answer).sort()).toEqual(["kind", "reason"]);
        }
      }
      expect(await opens(session.id)).toHaveLength(1);
      expect(await opens(other.session.id)).toEqual([]);

      // Control: the live claim lists the variables (secret-free) and opens the pin (audited).
      const listed = await post(ROUTES.variables, claim);
      expect(listed.headers.get("cache-control")).toBe("no-store");
      const list = await listed.text();
      expect(list).not.toContain(secret);
      expect(list).not.toContain(Buffer.from(secret).toString("base64"));
      expect(JSON.parse(list)).toEqual({
        kind: "variables",
        variables: [
          {
            credentialId: credential.id,
            vaultId: credential.vault_id,
            revision: 1,
            secretName: "API_TOKEN",
            networking: { type: "limited", allowed_hosts: ["api.test", "forbidden.test"] },
            injection: { header: true, body: false },
          },
        ],
      });
      const opened = await post(ROUTES.open, request);
      expect(opened.headers.get("cache-control")).toBe("no-store");
      const answer = (await opened.json()) as { kind: string; value: string };
      expect(answer.kind).toBe("secret");
      expect(Buffer.from(answer.value, "base64").toString("utf8")).toBe(secret);
      expect(await opens(session.id)).toMatchObject([
        { outcome: "opened", owner: claim.owner },
        { outcome: "opened", owner: claim.owner, epoch: claim.epoch, run_id: claim.runId },
      ]);
    } finally {
      held = null;
      release();
    }
    const events = await turn!.ended();
    expect(stopReason(events.at(-1))).toEqual({ type: "end_turn" });
    expect(textOf(events.filter((e) => e.type === "agent.tool_result").at(-1))).toContain("upstream-ok");

    // The run settled: its claim is not live any more.
    const [settled] = await opens(session.id);
    const late = {
      workspaceId: settled!.workspace_id,
      sessionId: session.id,
      runId: settled!.run_id,
      owner: settled!.owner,
      epoch: settled!.epoch,
    };
    expect(await (await post(ROUTES.variables, late)).json()).toMatchObject({ kind: "claim_lost" });
    const lateOpen = { ...late, holder: "egress_proxy", secretName: "API_TOKEN" };
    expect(await (await post(ROUTES.open, lateOpen)).json()).toMatchObject({ kind: "claim_lost" });
    expect(await opens(session.id)).toHaveLength(2);
  }, 90_000);

  it("the routes need the worker token (401) and a valid body (400): no other holder, no credential id", async () => {
    const claim = { workspaceId: "wrk_x", sessionId: "sesn_x", runId: "run_x", owner: "w/0", epoch: 1 };
    const open = { ...claim, holder: "egress_proxy", secretName: "API_TOKEN" };
    for (const [path, body] of [
      [ROUTES.variables, claim],
      [ROUTES.open, open],
    ] as const) {
      expect((await post(path, body, null)).status).toBe(401);
      expect((await post(path, body, "Bearer wrong-token-0123456789abc")).status).toBe(401);
      expect((await post(path, body, `Bearer ${KEY}`)).status).toBe(401);
      expect((await post(path, { ...body, credentialId: "vcrd_pick_my_own" })).status).toBe(400);
    }
    expect((await post(ROUTES.open, { ...open, holder: "mcp_connection" })).status).toBe(400);
    expect((await post(ROUTES.open, { ...open, holder: "sandbox" })).status).toBe(400);
    const { secretName: _, ...withoutUse } = open;
    expect((await post(ROUTES.open, withoutUse)).status).toBe(400);
  });

  it("no API response and no log line of either process holds a secret, as text or as base64", () => {
    const logs = [server.stdout(), server.stderr(), worker.stdout(), worker.stderr()].join("\n");
    // The logs and responses are real (trace level), so an absence means something.
    expect(worker.stderr()).toMatch(/run slice ended/);
    expect(bodies.length).toBeGreaterThan(10);
    expect(planted.length).toBeGreaterThanOrEqual(3);
    expect(upstreamSaw.some((s) => s.authorization === `Bearer ${planted[0]}`)).toBe(true);
    for (const secret of planted) {
      const base64 = Buffer.from(secret, "utf8").toString("base64");
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(base64);
      expect(bodies.filter((body) => body.includes(secret) || body.includes(base64))).toEqual([]);
    }
  });
}

describe("remote worker environment_variable credentials on SQLite", () => remoteSecretSuite("sqlite"));
describe.skipIf(postgresUnavailable() !== null)(
  "remote worker environment_variable credentials on PostgreSQL",
  () => remoteSecretSuite("postgres"),
);
