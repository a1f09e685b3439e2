/**
 * ACP runtimes around the runtime step, over the official Anthropic SDK against a real server in
 * this process (with an operator runtime file read as `--acp-runtimes` reads it): publication of an
 * `acp:<runtime>` model (a known runtime, shipped or the operator's; an unknown one or a bad name is
 * a 400 naming it), `models.retrieve`, session admission (the harness needs its sandbox eagerly and
 * a cloud environment), and the `acp_harness` credential holder over the worker transport.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic, { NotFoundError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acpRuntimeCatalogFrom } from "../../src/brains/catalog.js";
import type { SecretOpenRequest } from "../../src/coordinator/ports.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import { RemoteCredentialHolder } from "../../src/worker/remoteCredentials.js";
import { BAD_REQUEST, expectApiError, userMessage } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const TOKEN = "worker-token-acp-runtimes-e2e";
const silent = { info: () => {}, warn: () => {} };

let scratch: string;
let t: TestServer;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "awaken-acp-runtimes-"));
  const file = join(scratch, "runtimes.json");
  writeFileSync(
    file,
    JSON.stringify({
      runtimes: [
        {
          name: "house-agent",
          description: "The operator's own harness",
          command: ["house-agent", "--acp"],
          package: { manager: "npm", name: "@example/house-agent", version: "1.2.3" },
          env: { HOUSE_KEY: { vault_secret: "HOUSE_KEY" } },
          memory_file: "HOUSE.md",
        },
      ],
    }),
  );
  t = await startTestServer({
    workers: 0,
    leaseMs: 15_000,
    workerToken: TOKEN,
    // Environments below run on tier "none": the operator option enables it.
    allowWeakerTiers: true,
    acpRuntimes: acpRuntimeCatalogFrom(file),
  });
});
afterAll(async () => {
  await t?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("publication of acp: models", () => {
  it("publishes an agent on a shipped runtime and on the operator's", async () => {
    const claude = await t.client.beta.agents.create({ name: "coder", model: "acp:claude" });
    expect(claude.model).toMatchObject({ id: "acp:claude" });
    const house = await t.client.beta.agents.create({ name: "house", model: "acp:house-agent" });
    expect(house.model).toMatchObject({ id: "acp:house-agent" });
  });

  it("refuses a runtime this server does not know, naming it and the known ones", async () => {
    await expectApiError(
      t.client.beta.agents.create({ name: "x", model: "acp:nope" }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [
          'model: there is no ACP runtime named "nope"',
          "acp:claude",
          "acp:opencode",
          "acp:house-agent",
        ],
      },
    );
    // An update to one is refused the same way, and the agent keeps its version.
    const agent = await t.client.beta.agents.create({ name: "y", model: "acp:codex" });
    await expectApiError(
      t.client.beta.agents.update(agent.id, { version: agent.version, model: "acp:nope" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ['no ACP runtime named "nope"'] },
    );
    expect((await t.client.beta.agents.retrieve(agent.id)).version).toBe(agent.version);
  });

  it("refuses an acp: id without a runtime name, or with one outside the grammar", async () => {
    await expectApiError(
      t.client.beta.agents.create({ name: "x", model: "acp:" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["model:", "registered ACP runtime's name"] },
    );
    await expectApiError(
      t.client.beta.agents.create({ name: "x", model: "acp:Bad_Name" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["model:", "lower-case letters, digits and dashes"] },
    );
  });

  it("retrieves a known runtime as a model answered by its harness; an unknown one is a 404", async () => {
    expect(await t.client.models.retrieve("acp:claude")).toMatchObject({
      id: "acp:claude",
      provider: "acp",
      answered_offline: false,
    });
    await expect(t.client.models.retrieve("acp:nope")).rejects.toBeInstanceOf(NotFoundError);
    await expect(t.client.models.retrieve("acp:")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("session admission for an acp: agent", () => {
  it("refuses on_tool_use provisioning, naming the rule; eager takes it", async () => {
    const agent = await t.client.beta.agents.create({ name: "lazy-coder", model: "acp:claude" });
    const lazy = await t.client.beta.environments.create({
      name: "lazy",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "on_tool_use" } } as never,
    });
    await expectApiError(
      t.client.beta.sessions.create({ agent: agent.id, environment_id: lazy.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ['sandbox_provisioning "on_tool_use"', "ACP harness", "eager"] },
    );
    const eager = await t.client.beta.environments.create({
      name: "eager",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: eager.id });
    expect(session.id).toMatch(/^sesn_/);
  });

  it("checks a session's model override as a publication, and admits it as one", async () => {
    const agent = await t.client.beta.agents.create({ name: "plain", model: "claude-sonnet-4-6" });
    const eager = await t.client.beta.environments.create({
      name: "eager-override",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    const lazy = await t.client.beta.environments.create({
      name: "lazy-override",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "on_tool_use" } } as never,
    });
    const overridden = (model: string, environmentId: string) =>
      t.client.beta.sessions.create({
        agent: { type: "agent_with_overrides", id: agent.id, model },
        environment_id: environmentId,
      } as never);
    await expectApiError(overridden("acp:nope", eager.id), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: ['no ACP runtime named "nope"', "acp:claude"],
    });
    await expectApiError(overridden("acp:claude", lazy.id), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: ['sandbox_provisioning "on_tool_use"', "ACP harness"],
    });
    expect((await overridden("acp:house-agent", eager.id)).id).toMatch(/^sesn_/);
  });

  it("refuses a self_hosted environment: the harness runs in the sandbox", async () => {
    const agent = await t.client.beta.agents.create({ name: "hosted-coder", model: "acp:claude" });
    const hosted = await t.client.beta.environments.create({
      name: "hosted",
      config: { type: "self_hosted" } as never,
    });
    await expectApiError(
      t.client.beta.sessions.create({ agent: agent.id, environment_id: hosted.id }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: ["model: an acp: agent's harness runs inside the session's sandbox", "self_hosted"],
      },
    );
  });
});

describe("the acp_harness credential holder", () => {
  it("opens the variables the agent's runtime names for its harness, and no other", async () => {
    const secret = `acp-harness-${Math.random().toString(36).slice(2)}`;
    const environment = await t.client.beta.environments.create({
      name: "harness-creds",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
    });
    const agent = await t.client.beta.agents.create({ name: "keyed-coder", model: "acp:claude" });
    const vault = await t.client.beta.vaults.create({ display_name: "harness" } as never);
    const credentials = [];
    for (const name of ["ANTHROPIC_API_KEY", "OTHER_TOKEN"]) {
      credentials.push(
        await t.client.beta.vaults.credentials.create(vault.id, {
          auth: {
            type: "environment_variable",
            secret_name: name,
            secret_value: `${secret}-${name}`,
            networking: { type: "limited", allowed_hosts: ["api.anthropic.com"] },
            injection_location: { header: true, body: false },
          },
        } as never),
      );
    }
    const session = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      vault_ids: [vault.id],
    } as never);
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    const transport = new HttpWorkerTransport({
      baseUrl: t.server.url,
      token: TOKEN,
      log: silent,
      claimWaitMs: 0,
    });
    try {
      const a = await transport.claim("unit/0", 0);
      if (!a) throw new Error("no run to claim");
      const holder = new RemoteCredentialHolder(transport);
      const request: SecretOpenRequest = {
        workspaceId: a.workspaceId,
        sessionId: a.sessionId,
        runId: a.runId,
        owner: a.owner,
        epoch: a.epoch,
        holder: "acp_harness",
        secretName: "ANTHROPIC_API_KEY",
      };
      const opening = await holder.openSecret(request);
      if (opening.kind !== "secret") throw new Error(`expected a secret, got ${opening.kind}`);
      expect(opening.value.toString("utf8")).toBe(`${secret}-ANTHROPIC_API_KEY`);
      opening.value.fill(0);
      // A variable the runtime does not name stays the egress proxy's alone.
      expect(await holder.openSecret({ ...request, secretName: "OTHER_TOKEN" })).toMatchObject({
        kind: "refused",
        credentialId: credentials[1]?.id,
        reason: "the pin's holder policy does not allow the acp_harness holder",
      });
      // …and the runtime's variable is not an MCP process's.
      expect(await holder.openSecret({ ...request, holder: "mcp_process" })).toMatchObject({
        kind: "refused",
        reason: "the pin's holder policy does not allow the mcp_process holder",
      });
    } finally {
      transport.close();
    }
  });
});
