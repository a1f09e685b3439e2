import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { type Awaken, type InProcessBeta, openAwaken } from "../../src/embedded/index.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { startTestServer, TEST_MASTER_KEY } from "../support/testServer.js";
import { betaScenario } from "./betaScenario.js";

// Code written against the SDK's `client.beta` type-checks against `awaken.beta` (and back).
const sdkBeta: InProcessBeta = new Anthropic({ apiKey: "type-check-only" }).beta;
void sdkBeta;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const OFFLINE_ENV = { PATH: process.env.PATH };

async function openOnSqlite(): Promise<{ awaken: Awaken; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-embedded-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const awaken = await openAwaken({ dataDir, workers: 2, env: OFFLINE_ENV });
  cleanups.push(() => awaken.close());
  return { awaken, dataDir };
}

async function overHttp() {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  return betaScenario(t.client.beta);
}

describe("openAwaken", () => {
  it("runs the same client.beta program as the official SDK over HTTP, with the same results", async () => {
    const http = await overHttp();
    const { awaken } = await openOnSqlite();
    const embedded = await betaScenario(awaken.beta);
    expect(embedded.values).toEqual(http.values);
    expect(embedded.shapes).toEqual(http.shapes);
    // The turn itself: a parked custom tool call, answered, then the end of the turn.
    expect(embedded.values.parkedStop).toBe("requires_action");
    expect(embedded.values.endedStop).toBe("end_turn");
    expect(embedded.values.toolInput).toEqual({ q: "oslo" });
    expect(embedded.values.notFound).toMatchObject({
      isNotFound: true,
      status: 404,
      type: "not_found_error",
    });
    expect(embedded.values.invalid).toMatchObject({ isBadRequest: true, status: 400 });
    // Threads: the primary thread alone, its history the session's, not archivable on its own.
    expect(embedded.values.threadCount).toBe(1);
    expect(embedded.values.threadIsPrimary).toEqual([null, true]);
    expect(embedded.values.threadHistoryIds).toBe(true);
    expect(embedded.values.primaryArchive).toMatchObject({ isBadRequest: true, status: 400 });
  }, 60_000);

  it("runs the same program on PostgreSQL, in its own schema", async (ctx) => {
    const reason = postgresUnavailable();
    if (reason) ctx.skip(reason);
    const schema = await emptySchema();
    cleanups.push(() => schema.drop());
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-embedded-"));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const awaken = await openAwaken({
      databaseUrl: schema.url,
      dataDir,
      workers: 2,
      env: { ...OFFLINE_ENV, AWAKEN_MASTER_KEY: TEST_MASTER_KEY },
    });
    cleanups.push(() => awaken.close());
    expect(awaken.storage).toContain("PostgreSQL");
    const http = await overHttp();
    const embedded = await betaScenario(awaken.beta);
    expect(embedded.values).toEqual(http.values);
    expect(embedded.shapes).toEqual(http.shapes);
  }, 60_000);

  it("keeps its data dir private and its history across a close and a reopen", async () => {
    const { awaken, dataDir } = await openOnSqlite();
    const { ids } = await betaScenario(awaken.beta);
    await awaken.close();
    await awaken.close(); // idempotent
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const again = await openAwaken({ dataDir, workers: 1, env: OFFLINE_ENV });
    cleanups.push(() => again.close());
    const session = await again.beta.sessions.retrieve(ids.sessionId);
    expect(session.title).toBe("renamed");
  }, 60_000);

  it("validates bodies with the wire's schemas and limits", async () => {
    const { awaken } = await openOnSqlite();
    const refused = await awaken.beta.agents
      .create({ name: "", model: "m" } as Anthropic.Beta.Agents.AgentCreateParams)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    const deep: Record<string, unknown> = {};
    let cursor = deep;
    for (let i = 0; i < 80; i++) cursor = cursor.x = {} as Record<string, unknown>;
    const tooDeep = await awaken.beta.agents
      .create({ name: "n", model: "m", metadata: deep } as unknown as Anthropic.Beta.Agents.AgentCreateParams)
      .catch((e: unknown) => e);
    expect(tooDeep).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((tooDeep as Error).message)).toContain("levels deep");
  }, 60_000);

  it("a stream closed by its controller ends the loop", async () => {
    const { awaken } = await openOnSqlite();
    const agent = await awaken.beta.agents.create({ name: "a", model: "offline" });
    const env = await awaken.beta.environments.create({ name: "e" });
    const session = await awaken.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const stream = await awaken.beta.sessions.events.stream(session.id);
    await awaken.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "hello" }] }],
    });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === "agent.message") stream.controller.abort();
    }
    expect(seen[0]).toBe("user.message");
    expect(seen.at(-1)).toBe("agent.message");
  }, 60_000);
});
