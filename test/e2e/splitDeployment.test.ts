/**
 * The split deployment as real processes on PostgreSQL: `awaken control` and `awaken coordinator`
 * (each in a schema of its own) and two `awaken worker`s. Clients use one base URL, the
 * coordinator's: authoring, vaults and IAM are forwarded to Control and answer exactly as in the
 * all-in-one server (same errors, same roles and workspaces, a revoked key refused at once, an
 * access token confined to its session); runs execute on the workers; Control's records never land
 * in the coordinator's schema, nor sessions in Control's. Each forbidden setting is refused at
 * start-up with a message naming it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Anthropic, { AuthenticationError, NotFoundError, PermissionDeniedError } from "@anthropic-ai/sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinkClient } from "../../src/edge/control-link/linkClient.js";
import { CREDENTIAL_RECHECK_MS } from "../../src/edge/http/credentialLifetime.js";
import { runAwaken } from "../support/awakenCli.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import {
  expectApiError,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  StreamReader,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { CONTROL_TOKEN, type SplitCluster, startSplitCluster } from "../support/splitCluster.js";
import { openSse } from "../support/sseStreams.js";
import { TEST_MASTER_KEY } from "../support/testServer.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const KEY = "sk-awaken-split-deployment-test";
const WORKER_TOKEN = "split-deployment-worker-token-0123456789";

/** Runs `awaken <args>` with exactly `env` and resolves with its exit code and output. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ENTRY, ...args], {
      env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    // A refused start exits at once; one that was not refused is stopped after a while.
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** One call with the split tests' API key, answered as status and JSON body. */
async function rawJson(base: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("forbidden settings of the split processes", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "awaken-split-refusals-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const control = ["control", "--port", "0", "--coordinator-url", "http://127.0.0.1:9"];
  const coordinator = ["coordinator", "--port", "0", "--control-url", "http://127.0.0.1:9"];

  it.each([
    [
      "control holding the worker token",
      control,
      { AWAKEN_WORKER_TOKEN: WORKER_TOKEN },
      /AWAKEN_WORKER_TOKEN is set/,
    ],
    [
      "control without the control token",
      control,
      { AWAKEN_CONTROL_TOKEN: "" },
      /missing AWAKEN_CONTROL_TOKEN/,
    ],
    [
      "control with a short control token",
      control,
      { AWAKEN_CONTROL_TOKEN: "short" },
      /at least 32 characters/,
    ],
    ["control without a coordinator URL", ["control", "--port", "0"], {}, /missing --coordinator-url/],
    [
      "a coordinator holding the master key",
      coordinator,
      { AWAKEN_MASTER_KEY: TEST_MASTER_KEY },
      /AWAKEN_MASTER_KEY is set/,
    ],
    [
      "a coordinator holding retired keys",
      coordinator,
      { AWAKEN_MASTER_KEY_RETIRED: TEST_MASTER_KEY },
      /AWAKEN_MASTER_KEY_RETIRED is set/,
    ],
    ["a coordinator given an API key", coordinator, { AWAKEN_API_KEY: KEY }, /AWAKEN_API_KEY is set/],
    ["a coordinator without a Control URL", ["coordinator", "--port", "0"], {}, /missing --control-url/],
    [
      "a worker holding the control token",
      ["worker", "--coordinator-url", "http://127.0.0.1:9"],
      { AWAKEN_WORKER_TOKEN: WORKER_TOKEN },
      /AWAKEN_CONTROL_TOKEN is set/,
    ],
    [
      "a worker given a database",
      ["worker", "--coordinator-url", "http://127.0.0.1:9", "--database-url", "postgres://x@127.0.0.1/y"],
      { AWAKEN_WORKER_TOKEN: WORKER_TOKEN, AWAKEN_CONTROL_TOKEN: "" },
      /--database-url is set/,
    ],
  ] as const)("refuses %s, naming the setting", async (_name, args, env, message) => {
    const dataDir = mkdtempSync(join(dir, "d-"));
    const result = await run([...args, ...(args[0] === "worker" ? [] : ["--data-dir", dataDir])], {
      AWAKEN_CONTROL_TOKEN: CONTROL_TOKEN,
      ...env,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/refuses to start/);
  });

  it("refuses a coordinator whose data dir holds a master key file", async () => {
    const dataDir = mkdtempSync(join(dir, "k-"));
    writeFileSync(join(dataDir, "master.key"), `${TEST_MASTER_KEY}\n`, { mode: 0o600 });
    const result = await run([...coordinator, "--data-dir", dataDir], {
      AWAKEN_CONTROL_TOKEN: CONTROL_TOKEN,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/master\.key exists, but the seal key lives only in Control/);
    // The advice keeps the key (what was sealed under it needs it) and names a data dir of its own.
    expect(result.stderr).toContain("Leave the file where it is");
    expect(result.stderr).toContain("--data-dir; by default .awaken-coordinator");
  });

  it("a coordinator's data dir is its own by default, never the all-in-one server's .awaken", async () => {
    const help = await runAwaken(["coordinator", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain('(default: ".awaken-coordinator")');
  });
});

describe.skipIf(postgresUnavailable() !== null)(
  "the split deployment (control + coordinator + 2 workers)",
  () => {
    let dataDir: string;
    let cluster: SplitCluster;
    const workers: WorkerProcess[] = [];
    let url: string;
    const clientOf = (key: string) => new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "awaken-split-"));
      cluster = await startSplitCluster({
        dataDir,
        apiKey: KEY,
        workerToken: WORKER_TOKEN,
        coordinatorArgs: ["--workers", "0", "--allow-unsandboxed-tier"],
      });
      url = cluster.coordinatorUrl;
      for (const name of ["w1", "w2"]) {
        workers.push(
          await startWorker(url, WORKER_TOKEN, {}, [
            "--workspace-dir",
            join(dataDir, name),
            "--allow-unsandboxed-tier",
          ]),
        );
      }
    }, 60_000);

    afterAll(async () => {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
      await cluster?.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function admin(method: string, path: string, body?: unknown, key = KEY) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    }

    async function count(schemaUrl: string, table: string): Promise<number> {
      const client = new pg.Client({ connectionString: schemaUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: string }>(
          `select count(*) as n from ${pg.escapeIdentifier(table)}`,
        );
        return Number(rows[0]!.n);
      } finally {
        await client.end();
      }
    }

    it("runs turns of sessions on the workers, with authoring and vaults through the coordinator's one URL", async () => {
      const client = clientOf(KEY);
      const agent = await client.beta.agents.create({ name: "split", model: MODEL });
      const environment = await client.beta.environments.create({
        name: "split",
        config: { type: "cloud", sandbox: { tier: "none" } } as never,
      });
      await client.beta.vaults.create({ display_name: "split" } as never);
      const sessions = await Promise.all(
        [1, 2, 3, 4].map(() =>
          client.beta.sessions.create({ agent: agent.id, environment_id: environment.id }),
        ),
      );
      await Promise.all(
        sessions.map((s) => client.beta.sessions.events.send(s.id, { events: [userMessage("hello")] })),
      );
      for (const s of sessions) await waitForHistory(client, s.id, (h) => h.some(isEndTurnIdle), 30_000);
      // Executed by the workers: their logs say so (the coordinator runs nothing itself). A worker
      // logs a slice's end after its last commit answered, so the line may trail the history.
      const slices = () =>
        workers.map((w) => (w.stderr().match(/run slice ended/g) ?? []).length).reduce((a, b) => a + b, 0);
      await expect.poll(slices, { timeout: 5_000 }).toBeGreaterThanOrEqual(4);

      // Each record lives with its owner only.
      const { controlSchema, coordinatorSchema } = cluster;
      expect(await count(controlSchema.url, "agents")).toBe(1);
      expect(await count(controlSchema.url, "vaults")).toBe(1);
      expect(await count(controlSchema.url, "api_keys")).toBeGreaterThan(0);
      expect(await count(controlSchema.url, "sessions")).toBe(0);
      expect(await count(controlSchema.url, "executable_agents")).toBe(0);
      expect(await count(coordinatorSchema.url, "sessions")).toBe(4);
      expect(await count(coordinatorSchema.url, "executable_agents")).toBe(1);
      for (const table of ["agents", "agent_publications", "vaults", "vault_credentials", "api_keys"]) {
        expect(await count(coordinatorSchema.url, table), table).toBe(0);
      }
    });

    it("keeps roles, workspaces, revocation and access tokens exactly as Control decides them", async () => {
      const owner = clientOf(KEY);
      const agent = await owner.beta.agents.create({ name: "iam", model: MODEL });
      const environment = await owner.beta.environments.create({ name: "iam" });
      const mine = await owner.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
      const other = await owner.beta.sessions.create({ agent: agent.id, environment_id: environment.id });

      // A runtime key: sessions yes, authoring no (the wire's permission error).
      const runtime = await admin("POST", "/v1/awaken/api_keys", { role: "runtime", label: "app" });
      expect(runtime.status).toBe(200);
      const runtimeClient = clientOf(runtime.json.key as string);
      await runtimeClient.beta.sessions.retrieve(mine.id);
      await expectApiError(
        runtimeClient.beta.agents.create({ name: "no", model: MODEL }),
        PermissionDeniedError,
        {
          status: 403,
          type: "permission_error",
        },
      );

      // Another workspace's admin sees none of this workspace's records.
      const foreign = await admin("POST", "/v1/awaken/api_keys", {
        role: "admin",
        workspace_id: "wrkspc_split_other",
      });
      expect(foreign.status).toBe(200);
      const foreignClient = clientOf(foreign.json.key as string);
      await expectApiError(foreignClient.beta.agents.retrieve(agent.id), NotFoundError, NOT_FOUND);
      await expectApiError(foreignClient.beta.sessions.retrieve(mine.id), NotFoundError, NOT_FOUND);

      // An access token for one session reads it, and no other.
      const minted = await admin("POST", "/v1/awaken/access_tokens", {
        operations: ["read"],
        session_id: mine.id,
      });
      expect(minted.status, JSON.stringify(minted.json)).toBe(200);
      const tokenClient = clientOf(minted.json.token as string);
      expect((await tokenClient.beta.sessions.retrieve(mine.id)).id).toBe(mine.id);
      await expectApiError(tokenClient.beta.sessions.retrieve(other.id), NotFoundError, NOT_FOUND);

      // A token confined to a namespace of session names creates no unnamed session and reaches none.
      const namespaced = await admin("POST", "/v1/awaken/access_tokens", {
        operations: ["read", "send", "create"],
        session_namespace: "user-42/",
      });
      expect(namespaced.status, JSON.stringify(namespaced.json)).toBe(200);
      expect(namespaced.json.session_namespace).toBe("user-42/");
      const namespacedClient = clientOf(namespaced.json.token as string);
      await expectApiError(namespacedClient.beta.sessions.retrieve(mine.id), NotFoundError, NOT_FOUND);
      await expectApiError(
        namespacedClient.beta.sessions.create({ agent: agent.id, environment_id: environment.id }),
        PermissionDeniedError,
        { status: 403, type: "permission_error" },
      );

      // A token that expired and a key revoked are refused, the key at once.
      const short = await admin("POST", "/v1/awaken/access_tokens", {
        operations: ["read"],
        session_id: mine.id,
        ttl_seconds: 1,
      });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await expectApiError(
        clientOf(short.json.token as string).beta.sessions.retrieve(mine.id),
        AuthenticationError,
        {
          status: 401,
          type: "authentication_error",
        },
      );
      const revoked = await admin("POST", `/v1/awaken/api_keys/${runtime.json.id as string}/revoke`);
      expect(revoked.status, JSON.stringify(revoked.json)).toBe(200);
      await expectApiError(runtimeClient.beta.sessions.retrieve(mine.id), AuthenticationError, {
        status: 401,
        type: "authentication_error",
      });
    });

    it("ends a stream when its key is revoked through the coordinator, and a token's hint stream at its expiry", async () => {
      const owner = clientOf(KEY);
      const agent = await owner.beta.agents.create({ name: "streams", model: MODEL });
      const environment = await owner.beta.environments.create({ name: "streams" });
      const session = await owner.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
      const runtime = await admin("POST", "/v1/awaken/api_keys", { role: "runtime", label: "streams" });
      expect(runtime.status).toBe(200);
      const reader = await StreamReader.open(clientOf(runtime.json.key as string), session.id);
      const minted = await admin("POST", "/v1/awaken/access_tokens", {
        operations: ["read"],
        ttl_seconds: 3,
      });
      expect(minted.status, JSON.stringify(minted.json)).toBe(200);
      const hints = await openSse(`${url}/v1/awaken/sessions/stream`, minted.json.token as string);
      try {
        expect(hints.status).toBe(200);
        // Control answers the token's re-checks over the link (never cached there): it ends at expiry.
        await hints.end(Date.parse(minted.json.expires_at as string) - Date.now() + 1_500);
        expect(reader.ended).toBe(false);
        const revoked = await admin("POST", `/v1/awaken/api_keys/${runtime.json.id as string}/revoke`);
        expect(revoked.status).toBe(200);
        // Revoked through this coordinator, its cache drops the key at once: the next re-check ends it.
        await reader.end(CREDENTIAL_RECHECK_MS + 3_000);
        expect(reader.error).toBeNull();
      } finally {
        await hints.close();
        await reader.close();
      }
    });

    it("mints keys with `awaken api-keys` and erases a data subject through the coordinator, audited once", async () => {
      // The CLI talks to the one base URL like any client.
      const minted = await new Promise<string>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [ENTRY, "api-keys", "create", "--role", "runtime", "--label", "cli", "--url", url],
          { env: { PATH: process.env.PATH, AWAKEN_API_KEY: KEY }, stdio: ["ignore", "pipe", "pipe"] },
        );
        let out = "";
        let err = "";
        child.stdout.on("data", (chunk) => {
          out += chunk;
        });
        child.stderr.on("data", (chunk) => {
          err += chunk;
        });
        child.on("exit", (code) =>
          code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}: ${err}`)),
        );
      });
      expect(minted).toMatch(/^sk-awaken-/);
      const runtime = clientOf(minted);

      const owner = clientOf(KEY);
      const agent = await owner.beta.agents.create({ name: "erasure", model: MODEL });
      const environment = await owner.beta.environments.create({
        name: "erasure",
        config: { type: "cloud", sandbox: { tier: "none" } } as never,
      });
      const secret = `personal-${Math.random().toString(36).slice(2)}`;
      const session = await runtime.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        metadata: { awaken_data_subject: "user-77" },
      });
      await runtime.beta.sessions.events.send(session.id, { events: [userMessage(`my note: ${secret}`)] });
      await waitForHistory(runtime, session.id, (h) => h.some(isEndTurnIdle), 30_000);

      const erased = await admin("POST", "/v1/awaken/data_subjects/user-77/erasure");
      expect(erased.status, JSON.stringify(erased.json)).toBe(200);
      expect(erased.json).toMatchObject({
        type: "data_subject_erasure",
        subject_id: "user-77",
        removed: true,
      });
      const after = [];
      for await (const event of runtime.beta.sessions.events.list(session.id)) after.push(event);
      expect(JSON.stringify(after)).not.toContain(secret);
      expect(JSON.stringify(after)).toContain("[erased]");
      const again = await admin("POST", "/v1/awaken/data_subjects/user-77/erasure");
      expect(again.json).toMatchObject({ removed: false });
      // The coordinator audits its erasure; the merged audit lists it once.
      const audit = await admin("GET", "/v1/awaken/audit?limit=100");
      const erasures = (audit.json.data as Array<{ resource_type: string; action: string }>).filter(
        (e) => e.action === "erase",
      );
      expect(erasures).toHaveLength(1);
    });

    it("serves the link only with the control token: an API key or the worker token is refused", async () => {
      for (const token of [KEY, WORKER_TOKEN]) {
        for (const base of [url, cluster.control.url]) {
          const response = await fetch(`${base}/internal/v1/rpc/iam/authenticate`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify([KEY]),
          });
          expect(response.status).toBe(401);
        }
      }
    });
  },
);

describe.skipIf(postgresUnavailable() !== null)("registration across the split", () => {
  let dataDir: string;
  let cluster: SplitCluster;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-split-registration-"));
    cluster = await startSplitCluster({
      dataDir,
      apiKey: KEY,
      coordinatorDown: true,
      coordinatorArgs: ["--workers", "1", "--allow-unsandboxed-tier"],
    });
  }, 60_000);

  afterAll(async () => {
    await cluster?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function rows(schemaUrl: string, query: string): Promise<Array<Record<string, unknown>>> {
    const client = new pg.Client({ connectionString: schemaUrl });
    await client.connect();
    try {
      return (await client.query(query)).rows;
    } finally {
      await client.end();
    }
  }

  it("a publication made through Control's own door while the coordinator is down is durable, and lands once when it comes up", async () => {
    // The official SDK at Control's door: the coordinator, which would forward the call, is down.
    const operator = new Anthropic({ baseURL: cluster.control.apiUrl!, apiKey: KEY, maxRetries: 0 });
    const agent = await operator.beta.agents.create({ name: "published while down", model: MODEL });
    const agentId = agent.id;
    expect((await operator.beta.agents.retrieve(agentId)).version).toBe(1);
    // The rest of the operator's door answers too: vaults, keys, the audit; sessions are the coordinator's.
    const vault = await operator.beta.vaults.create({ display_name: "while down" });
    const minted = await rawJson(cluster.control.apiUrl!, "POST", "/v1/awaken/api_keys", { role: "runtime" });
    expect(minted.status).toBe(200);
    const audit = await rawJson(cluster.control.apiUrl!, "GET", "/v1/awaken/audit");
    const audited = (audit.body.data as Array<{ resource_type: string; resource_id: string }>).map(
      (e) => `${e.resource_type} ${e.resource_id}`,
    );
    expect(audited).toEqual(expect.arrayContaining([`agent ${agentId}`, `vault ${vault.id}`]));
    await expectApiError(operator.beta.sessions.list(), NotFoundError, NOT_FOUND);
    // The Console is served there for these pages.
    const consolePage = await fetch(`${cluster.control.apiUrl}/console/`);
    expect(consolePage.status).toBe(200);
    expect(consolePage.headers.get("content-type")).toContain("text/html");
    await expectApiError(
      new Anthropic({
        baseURL: cluster.control.apiUrl!,
        apiKey: "sk-not-a-key",
        maxRetries: 0,
      }).beta.agents.list(),
      AuthenticationError,
      { status: 401, type: "authentication_error" },
    );
    const pending = await rows(
      cluster.controlSchema.url,
      `select registered_at from agent_publications where agent_id = '${agentId}'`,
    );
    expect(pending).toEqual([{ registered_at: null }]);

    const coordinator = await cluster.startCoordinator();
    const deadline = Date.now() + 45_000;
    let registered: Array<Record<string, unknown>> = [];
    let marked: Array<Record<string, unknown>> = [];
    // The coordinator stores the snapshot, then Control marks the publication once it has the
    // answer: wait for both, or the mark can be read between the two.
    while (Date.now() < deadline) {
      registered = await rows(
        cluster.coordinatorSchema.url,
        `select agent_id, version::int as version from executable_agents where agent_id = '${agentId}'`,
      );
      marked = await rows(
        cluster.controlSchema.url,
        `select registered_at, registration_error from agent_publications where agent_id = '${agentId}'`,
      );
      const answered = marked[0]?.registered_at !== null || marked[0]?.registration_error !== null;
      if (registered.length > 0 && answered) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(registered).toEqual([{ agent_id: agentId, version: 1 }]);
    expect(marked[0]!.registered_at).not.toBeNull();
    expect(marked[0]!.registration_error).toBeNull();

    // Runnable through the coordinator's public API, on the one registered snapshot.
    const client = coordinator.client;
    const environment = await client.beta.environments.create({
      name: "registration",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    const session = await client.beta.sessions.create({ agent: agentId, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 30_000);
    const catalog = await rows(
      cluster.coordinatorSchema.url,
      `select count(*)::int as n from executable_agents where agent_id = '${agentId}'`,
    );
    expect(catalog).toEqual([{ n: 1 }]);
  });

  it("the coordinator's /readyz names Control while no replica answers, and is ready again once it is back", async () => {
    const coordinator = cluster.coordinator ?? (await cluster.startCoordinator());
    const readyz = async () => {
      const response = await fetch(`${coordinator.url}/readyz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const settled = async (status: number) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const answer = await readyz();
        if (answer.status === status || Date.now() > deadline) return answer;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const up = await settled(200);
    expect(up.body).toMatchObject({ status: "ready", checks: { database: "ok", control: "ok" } });

    await cluster.stopControl();
    const down = await settled(503);
    expect(down).toEqual({
      status: 503,
      body: {
        status: "unready",
        checks: { database: "ok", migrations: "current", workers: "polling", control: "unreachable" },
        reason: "control: no replica answers ready",
      },
    });

    await cluster.restartControl();
    expect((await settled(200)).body).toMatchObject({ status: "ready", checks: { control: "ok" } });
  });

  it("the same identity with another fingerprint fails closed at the coordinator", async () => {
    await (cluster.coordinator ?? (await cluster.startCoordinator())).client.beta.agents.list();
    const client = cluster.coordinator!.client;
    const agent = await client.beta.agents.create({ name: "original", model: MODEL });
    const coordinator = new LinkClient({
      baseUrl: cluster.coordinatorUrl,
      token: CONTROL_TOKEN,
      peer: "the Coordinator",
    });
    const forged = {
      workspaceId: "wrkspc_default",
      agentId: agent.id,
      version: 1,
      fingerprint: "0".repeat(64),
      definition: { name: "forged", model: MODEL },
      publishedAt: Date.now(),
    };
    await expect(coordinator.call("registrar", "register", [forged])).rejects.toMatchObject({
      code: "publication_conflict",
      retryable: false,
    });
    // The catalog keeps the published snapshot: sessions still run what was published.
    const stored = await rows(
      cluster.coordinatorSchema.url,
      `select fingerprint from executable_agents where agent_id = '${agent.id}'`,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.fingerprint).not.toBe(forged.fingerprint);
  });

  it("a coordinator whose catalog was lost gets every publication again from Control (--rebuild-catalog)", async () => {
    const client = (cluster.coordinator ?? (await cluster.startCoordinator())).client;
    const agent = await client.beta.agents.create({ name: "kept by Control", model: MODEL });
    const before = await rows(
      cluster.coordinatorSchema.url,
      "select agent_id, fingerprint from executable_agents",
    );
    expect(before.some((r) => r.agent_id === agent.id)).toBe(true);
    // The projection is lost (a restored backup without it, an operator's mistake).
    await rows(cluster.coordinatorSchema.url, "delete from executable_agents");
    await cluster.restartControl(["--rebuild-catalog"]);
    const deadline = Date.now() + 30_000;
    let after: Array<Record<string, unknown>> = [];
    while (Date.now() < deadline) {
      after = await rows(
        cluster.coordinatorSchema.url,
        "select agent_id, fingerprint from executable_agents",
      );
      if (after.length >= before.length) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const key = (r: Record<string, unknown>) => `${String(r.agent_id)}:${String(r.fingerprint)}`;
    expect(after.map(key).sort()).toEqual(before.map(key).sort());
  });
});
