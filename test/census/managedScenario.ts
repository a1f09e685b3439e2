/**
 * One pass over every operation of the SDK's Managed family, through the official client as a user
 * writes it: each family's objects are made, read, listed, changed and ended in the order the SDK
 * documents. The census test watches the answers; this file only has to call everything once.
 */
// @peculiar/x509 needs the reflect polyfill loaded before it.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import * as x509 from "@peculiar/x509";
import { MODEL } from "../support/sdkHelpers.js";
import { selfHostedEnvironment, sessionsToken } from "../support/selfHosted.js";
import type { TestServer } from "../support/testServer.js";
import type { CensusRecorder } from "./censusRecorder.js";

type Client = Anthropic;

export interface ScenarioContext {
  server: TestServer;
  /** The watched client (an admin API key). */
  client: Client;
  census: CensusRecorder;
  /** A model whose requests are never answered: what runs on it stays in flight until canceled. */
  heldModel: string;
}

/** Reads a stream until `stop` says so (or the stream ends), giving the census every event. */
async function readStream(
  ctx: ScenarioContext,
  path: string,
  stream: AsyncIterable<unknown>,
  stop: (event: { type: string }) => boolean,
): Promise<Array<{ type: string }>> {
  const events: Array<{ type: string }> = [];
  for await (const event of stream) {
    events.push(event as { type: string });
    if (stop(event as { type: string })) break;
  }
  ctx.census.streamed(path, events);
  return events;
}

const idle = (e: { type: string }) => e.type === "session.status_idle";

export async function agentsAndEnvironments(ctx: ScenarioContext) {
  const { client } = ctx;
  const agent = await client.beta.agents.create({ name: "census", model: MODEL, description: "v1" });
  await client.beta.agents.retrieve(agent.id);
  await client.beta.agents.update(agent.id, { version: agent.version, description: "v2" });
  await client.beta.agents.list({ limit: 5 });
  await client.beta.agents.versions.list(agent.id);

  // Eager: the sessions below spawn agents and mount resources, which need the sandbox before the first tool call.
  const environment = await client.beta.environments.create({
    name: "census",
    config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
  });
  await client.beta.environments.retrieve(environment.id);
  await client.beta.environments.update(environment.id, { description: "for the census" });
  await client.beta.environments.list({ limit: 5 });
  const spare = await client.beta.environments.create({ name: "census-spare" });
  await client.beta.environments.archive(spare.id);
  await client.beta.environments.delete(spare.id);
  return { agentId: agent.id, environmentId: environment.id };
}

/** A session with a custom tool turn, its events, threads (a spawned inline agent) and its end. */
export async function sessions(ctx: ScenarioContext, environmentId: string) {
  const { client } = ctx;
  const lead = await client.beta.agents.create({
    name: "census-lead",
    model: MODEL,
    multiagent: { type: "multiagent_20261001" },
  });
  const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environmentId });
  await client.beta.sessions.retrieve(session.id);
  await client.beta.sessions.update(session.id, { title: "census", metadata: { pass: "1" } });
  await client.beta.sessions.list({ agent_id: lead.id, limit: 5 });

  // Both streams open before the turn, so each has the turn's events to show.
  const primary = (await client.beta.sessions.threads.list(session.id)).data[0];
  if (!primary) throw new Error("a new session lists no thread");
  const threadStream = await client.beta.sessions.threads.events.stream(primary.id, {
    session_id: session.id,
  });
  const stream = await client.beta.sessions.events.stream(session.id);
  await client.beta.sessions.events.send(session.id, {
    events: [
      {
        type: "user.message",
        content: [
          {
            type: "text",
            text: 'call spawn_agent {"agent":{"name":"critic","system":"You critique."},"message":"doubt"}',
          },
        ],
      },
    ],
  });
  await readStream(ctx, "beta.sessions.events.stream", stream, idle);
  await readStream(ctx, "beta.sessions.threads.events.stream", threadStream, (e) =>
    e.type.endsWith("status_idle"),
  );
  await client.beta.sessions.events.list(session.id, { limit: 50 });

  const threads = await client.beta.sessions.threads.list(session.id);
  const child = threads.data.find((thread) => thread.parent_thread_id !== null);
  if (!child) throw new Error("the spawn made no thread");
  await client.beta.sessions.threads.retrieve(child.id, { session_id: session.id });
  await client.beta.sessions.threads.events.list(child.id, { session_id: session.id });
  await client.beta.sessions.threads.archive(child.id, { session_id: session.id });

  await client.beta.sessions.archive(session.id);
  const spare = await client.beta.sessions.create({ agent: lead.id, environment_id: environmentId });
  await client.beta.sessions.delete(spare.id);
  await client.beta.agents.archive(lead.id);
}

export async function filesAndSkills(ctx: ScenarioContext) {
  const { client } = ctx;
  const skillMd = (name: string) => `---\nname: ${name}\ndescription: Census skill.\n---\n# ${name}\n`;
  const bundle = (name: string) =>
    Promise.all([
      toFile(Buffer.from(skillMd(name)), `${name}/SKILL.md`),
      toFile(Buffer.from("print(1)\n"), `${name}/run.py`),
    ]);

  for (const files of [client.beta.files, client.files]) {
    const uploaded = await files.upload({ file: await toFile(Buffer.from("census,1\n"), "census.csv") });
    await files.retrieveMetadata(uploaded.id);
    await files.list({ limit: 5 });
    await (await files.download(uploaded.id)).arrayBuffer();
    await files.delete(uploaded.id);
  }

  const beta = await client.beta.skills.create({ files: await bundle("census-beta") });
  await client.beta.skills.retrieve(beta.id);
  await client.beta.skills.list({ limit: 5 });
  const betaVersion = await client.beta.skills.versions.create(beta.id, {
    files: await bundle("census-beta"),
  });
  await client.beta.skills.versions.retrieve(betaVersion.id, { skill_id: beta.id });
  await client.beta.skills.versions.list(beta.id);
  await (await client.beta.skills.versions.download(betaVersion.id, { skill_id: beta.id })).arrayBuffer();
  // A skill keeps at least one version: the newer one goes, then the skill.
  await client.beta.skills.versions.delete(betaVersion.id, { skill_id: beta.id });
  await client.beta.skills.delete(beta.id);

  const ga = await client.skills.create({ files: await bundle("census-ga") });
  await client.skills.retrieve(ga.id);
  await client.skills.list({ limit: 5 });
  const gaVersion = await client.skills.versions.create(ga.id, { files: await bundle("census-ga") });
  await client.skills.versions.retrieve(gaVersion.id, { skill_id: ga.id });
  await client.skills.versions.list(ga.id);
  await client.skills.versions.delete(gaVersion.id, { skill_id: ga.id });
  await client.skills.delete(ga.id);
}

export async function memoryStores(ctx: ScenarioContext) {
  const { client } = ctx;
  const store = await client.beta.memoryStores.create({ name: "census", description: "notes" });
  await client.beta.memoryStores.retrieve(store.id);
  await client.beta.memoryStores.update(store.id, { description: "census notes" });
  await client.beta.memoryStores.list({ limit: 5 });
  const memory = await client.beta.memoryStores.memories.create(store.id, {
    path: "/notes/a.md",
    content: "one",
  });
  await client.beta.memoryStores.memories.retrieve(memory.id, { memory_store_id: store.id });
  await client.beta.memoryStores.memories.update(memory.id, { memory_store_id: store.id, content: "two" });
  await client.beta.memoryStores.memories.list(store.id);
  const versions = await client.beta.memoryStores.memoryVersions.list(store.id);
  const first = versions.data[versions.data.length - 1];
  if (!first) throw new Error("a written memory has no version");
  await client.beta.memoryStores.memoryVersions.retrieve(first.id, { memory_store_id: store.id });
  await client.beta.memoryStores.memoryVersions.redact(first.id, { memory_store_id: store.id });
  await client.beta.memoryStores.memories.delete(memory.id, { memory_store_id: store.id });
  await client.beta.memoryStores.archive(store.id);
  await client.beta.memoryStores.delete(store.id);
}

/** A vault with a bearer credential for an MCP server nobody runs (validation says so, in a 200). */
export async function vaults(ctx: ScenarioContext) {
  const { client } = ctx;
  const vault = await client.beta.vaults.create({ display_name: "census" });
  await client.beta.vaults.retrieve(vault.id);
  await client.beta.vaults.update(vault.id, { display_name: "census vault" });
  await client.beta.vaults.list({ limit: 5 });
  const credential = await client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token: "census-token", mcp_server_url: "https://mcp.example.com/mcp" },
  });
  await client.beta.vaults.credentials.retrieve(credential.id, { vault_id: vault.id });
  await client.beta.vaults.credentials.update(credential.id, { vault_id: vault.id, display_name: "census" });
  await client.beta.vaults.credentials.list(vault.id);
  await client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
  await client.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });
  await client.beta.vaults.credentials.delete(credential.id, { vault_id: vault.id });
  await client.beta.vaults.archive(vault.id);
  await client.beta.vaults.delete(vault.id);
}

/** A session with a file, a memory store and a repository mounted; each resource read, changed, removed. */
export async function sessionResources(ctx: ScenarioContext, agentId: string, environmentId: string) {
  const { client } = ctx;
  const file = await client.beta.files.upload({
    file: await toFile(Buffer.from("mounted\n"), "mounted.txt"),
  });
  const session = await client.beta.sessions.create({
    agent: agentId,
    environment_id: environmentId,
    resources: [
      {
        type: "github_repository",
        url: "https://140.82.112.3/acme/widgets.git",
        authorization_token: "ghp_census_token_0000000000000000",
      },
    ],
  });
  const repository = session.resources[0];
  if (repository?.type !== "github_repository") throw new Error("the session mounts no repository");
  const added = await client.beta.sessions.resources.add(session.id, { type: "file", file_id: file.id });
  await client.beta.sessions.resources.list(session.id);
  await client.beta.sessions.resources.retrieve(added.id, { session_id: session.id });
  await client.beta.sessions.resources.update(repository.id, {
    session_id: session.id,
    authorization_token: "ghp_census_token_1111111111111111",
  });
  await client.beta.sessions.resources.delete(added.id, { session_id: session.id });
  await client.beta.sessions.archive(session.id);
}

/** A self-hosted environment's work item: polled and acked by its worker, heartbeated on the session token. */
export async function selfHostedWork(ctx: ScenarioContext) {
  const { client } = ctx;
  const setup = await selfHostedEnvironment(ctx.server);
  const env = setup.environment.id;
  const worker = ctx.census.watch(setup.worker);
  await client.beta.sessions.create({ agent: setup.agent.id, environment_id: env });
  const polled = await worker.beta.environments.work.poll(env);
  if (!polled) throw new Error("no work to poll");
  await worker.beta.environments.work.ack(polled.id, { environment_id: env });
  const tokenClient = ctx.census.watch(
    new Anthropic({ baseURL: ctx.server.server.url, apiKey: sessionsToken(polled.secret), maxRetries: 0 }),
  );
  await tokenClient.beta.environments.work.heartbeat(polled.id, {
    environment_id: env,
    expected_last_heartbeat: "NO_HEARTBEAT",
  });
  await client.beta.environments.work.retrieve(polled.id, { environment_id: env });
  await client.beta.environments.work.update(polled.id, { environment_id: env, metadata: { rack: "7" } });
  await worker.beta.environments.work.list(env);
  await worker.beta.environments.work.stats(env);
  await client.beta.environments.work.stop(polled.id, { environment_id: env, force: true });
}

export async function models(ctx: ScenarioContext) {
  const { client } = ctx;
  for (const models of [client.beta.models, client.models]) {
    const page = await models.list({ limit: 5 });
    const first = page.data[0];
    if (!first) throw new Error("no model is listed");
    await models.retrieve(first.id);
  }
}

/** A deployment without a schedule, run once by hand; its run read back; paused, resumed, archived. */
export async function deployments(ctx: ScenarioContext, agentId: string, environmentId: string) {
  const { client } = ctx;
  const deployment = await client.beta.deployments.create({
    name: "census",
    agent: agentId,
    environment_id: environmentId,
    initial_events: [{ type: "user.message", content: [{ type: "text", text: "good morning" }] }],
  });
  await client.beta.deployments.retrieve(deployment.id);
  await client.beta.deployments.update(deployment.id, { description: "census run" });
  await client.beta.deployments.list({ limit: 5 });
  const run = await client.beta.deployments.run(deployment.id);
  await client.beta.deploymentRuns.retrieve(run.id);
  await client.beta.deploymentRuns.list({ deployment_id: deployment.id });
  await client.beta.deployments.pause(deployment.id);
  await client.beta.deployments.unpause(deployment.id);
  await client.beta.deployments.archive(deployment.id);
}

/**
 * A dream over a memory store and one past session, then one canceled (on the held model, so it is
 * surely still running: the offline model may have finished it before the cancel arrives).
 */
export async function dreams(ctx: ScenarioContext, agentId: string, environmentId: string) {
  const { client } = ctx;
  const store = await client.beta.memoryStores.create({ name: "census-dream" });
  await client.beta.memoryStores.memories.create(store.id, { path: "/notes/b.md", content: "second" });
  await client.beta.memoryStores.memories.create(store.id, { path: "/notes/a.md", content: "first" });
  const session = await client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
  const inputs = [
    { type: "memory_store" as const, memory_store_id: store.id },
    { type: "sessions" as const, session_ids: [session.id] },
  ];
  const dream = await client.beta.dreams.create({ inputs, model: MODEL });
  await client.beta.dreams.retrieve(dream.id);
  await client.beta.dreams.list({ limit: 5 });
  const canceled = await client.beta.dreams.create({ inputs, model: ctx.heldModel });
  await client.beta.dreams.cancel(canceled.id);
  await client.beta.dreams.archive(canceled.id);
}

/** Profiles on both lines: made, read, changed, listed, given URLs and data controls, deleted. */
export async function userProfiles(ctx: ScenarioContext) {
  const { client } = ctx;
  const beta = await client.beta.userProfiles.create({
    name: "Ada",
    external_id: "census-ada",
    metadata: { team: "a" },
  });
  await client.beta.userProfiles.retrieve(beta.id);
  await client.beta.userProfiles.update(beta.id, { name: "Ada L." });
  await client.beta.userProfiles.list({ limit: 5 });
  await client.beta.userProfiles.createEnrollmentURL(beta.id);
  await client.beta.userProfiles.actionURLs.create(beta.id, { action: { type: "enroll_end_user" } });
  await client.beta.userProfiles.providers.google.dataControls.retrieve(beta.id);
  await client.beta.userProfiles.providers.google.dataControls.update(beta.id, {});
  await client.beta.userProfiles.delete(beta.id);

  const ga = await client.userProfiles.create({ name: "Grace", metadata: { team: "b" } });
  await client.userProfiles.retrieve(ga.id);
  await client.userProfiles.update(ga.id, { name: "Grace H." });
  await client.userProfiles.list({ limit: 5 });
  await client.userProfiles.actionURLs.create(ga.id, { action: { type: "enroll_end_user" } });
  await client.userProfiles.delete(ga.id);
}

/** A tunnel, its token revealed and rotated, a CA certificate added and archived, the tunnel archived. */
export async function tunnels(ctx: ScenarioContext) {
  const { client } = ctx;
  const tunnel = await client.beta.tunnels.create({ display_name: "census" });
  await client.beta.tunnels.retrieve(tunnel.id);
  await client.beta.tunnels.list({ limit: 5 });
  await client.beta.tunnels.revealToken(tunnel.id);
  await client.beta.tunnels.rotateToken(tunnel.id, { reason: "census" });
  const certificate = await client.beta.tunnels.certificates.create(tunnel.id, {
    ca_certificate_pem: await selfSignedCaPem(),
  });
  await client.beta.tunnels.certificates.retrieve(certificate.id, { tunnel_id: tunnel.id });
  await client.beta.tunnels.certificates.list(tunnel.id);
  await client.beta.tunnels.certificates.archive(certificate.id, { tunnel_id: tunnel.id });
  await client.beta.tunnels.archive(tunnel.id);
}

/** A throwaway CA certificate (PEM), as a private network's MCP server would be signed by. */
async function selfSignedCaPem(): Promise<string> {
  const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = (await webcrypto.subtle.generateKey(algorithm, false, [
    "sign",
    "verify",
  ])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "CN=Census private CA",
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  return ca.toString("pem");
}

/** A webhook endpoint: made (its secret shown once), read, changed, listed, its secret regenerated, deleted. */
export async function webhookEndpoints(ctx: ScenarioContext) {
  const { client } = ctx;
  const endpoints = client.beta.organization.webhooks;
  const endpoint = await endpoints.create({
    url: "https://hooks.example.com/census",
    // A type the SDK's endpoint declares (Managed events are served too, outside that declared union: docs/webhooks.md).
    enabled_events: ["user_profile.program_status_updated"],
    name: "census",
  });
  await endpoints.retrieve(endpoint.id);
  await endpoints.update(endpoint.id, { description: "census hook" });
  await endpoints.list();
  await endpoints.regenerateSigningSecret(endpoint.id);
  await endpoints.delete(endpoint.id);
}
