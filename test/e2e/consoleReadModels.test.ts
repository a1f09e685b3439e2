/**
 * The Console's read models over real HTTP: `GET /v1/awaken/sessions/outcomes` says which
 * session's last run failed (and its error) while the wire's status stays `idle`, and
 * `GET /v1/awaken/overview` folds the runs, latency and tokens of the caller's sessions. Both are
 * computed from committed history, and neither shows another workspace anything. On SQLite and on
 * the real PostgreSQL server.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  BAD_REQUEST,
  expectApiError,
  MODEL,
  NOT_FOUND,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

interface Outcomes {
  data: Array<{
    session_id: string;
    last_run: {
      outcome: string;
      stop_reason: string;
      error: { type: string; message: string } | null;
    } | null;
  }>;
}
interface Overview {
  runs_by_hour: Array<{ hour: string; completed: number; failed: number }>;
  run_latency_ms: { runs: number; p50: number | null; p99: number | null };
  tokens: Array<{ provider: string; model: string; requests: number; output_tokens: number }>;
  live_sessions: unknown[];
  truncated: boolean;
}

const BACKENDS: Record<string, () => Promise<{ databaseUrl?: string; drop?: () => Promise<void> }>> = {
  SQLite: async () => ({}),
  PostgreSQL: async () => {
    const schema = await emptySchema();
    return { databaseUrl: schema.url, drop: () => schema.drop() };
  },
};
// PostgreSQL is left out only outside CI without a server (`postgresUnavailable`); in CI it runs.
const RUNNING = Object.keys(BACKENDS).filter((n) => n !== "PostgreSQL" || postgresUnavailable() === null);

describe.each(RUNNING)("the Console's read models on %s", { timeout: 60_000 }, (backend) => {
  let fake: FakeModelServer;
  let t: TestServer;
  let drop: (() => Promise<void>) | undefined;
  let agentId: string;
  let environmentId: string;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    const db = await BACKENDS[backend]!();
    drop = db.drop;
    t = await startTestServer({
      env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
      ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}),
    });
    agentId = (await t.client.beta.agents.create({ name: "read-models", model: MODEL })).id;
    environmentId = (await t.client.beta.environments.create({ name: "read-models-env" })).id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await drop?.();
  });

  async function run(reply: Parameters<FakeModelServer["enqueue"]>[0]): Promise<string> {
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    fake.enqueue(reply);
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage("go")] });
    await waitForHistory(
      t.client,
      session.id,
      (h) => h.some((e) => e.type === "session.status_idle"),
      30_000,
    );
    return session.id;
  }

  const outcomes = (client: Anthropic, ids: string[]) =>
    client.get<Outcomes>("/v1/awaken/sessions/outcomes", { query: { session_ids: ids } });

  async function keyFor(role: string, workspaceId?: string, agentIds?: string[]): Promise<Anthropic> {
    const response = await fetch(`${t.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        role,
        ...(workspaceId ? { workspace_id: workspaceId } : {}),
        ...(agentIds ? { agent_ids: agentIds } : {}),
      }),
    });
    const { key } = (await response.json()) as { key: string };
    return new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });
  }

  it("tells a failed session from a completed one, with its error, and keeps each workspace's own", async () => {
    const ok = await run({ kind: "text", text: "done" });
    const failed = await run({ kind: "error", status: 400, message: "messages: field required" });
    const wire = await t.client.beta.sessions.retrieve(failed);
    expect(wire.status).toBe("idle");

    const answer = await outcomes(t.client, [ok, failed]);
    const byId = new Map(answer.data.map((o) => [o.session_id, o.last_run]));
    expect(byId.get(ok)).toMatchObject({ outcome: "completed", stop_reason: "end_turn", error: null });
    expect(byId.get(failed)).toMatchObject({ outcome: "failed", stop_reason: "retries_exhausted" });
    expect(byId.get(failed)?.error?.message).toContain("messages: field required");

    const runtime = await keyFor("runtime");
    expect((await outcomes(runtime, [failed])).data[0]?.last_run?.outcome).toBe("failed");
    const other = await keyFor("admin", `wrkspc_readmodels_${backend.toLowerCase()}_${Date.now()}`);
    await expectApiError(outcomes(other, [failed]), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(outcomes(t.client, ["sesn_../x"]), Anthropic.BadRequestError, BAD_REQUEST);
    await expectApiError(
      outcomes(
        t.client,
        Array.from({ length: 51 }, (_, i) => `sesn_${i}`),
      ),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );

    const overview = await t.client.get<Overview>("/v1/awaken/overview");
    expect(overview.runs_by_hour).toHaveLength(24);
    const total = (key: "completed" | "failed") => overview.runs_by_hour.reduce((n, h) => n + h[key], 0);
    expect(total("completed")).toBeGreaterThanOrEqual(1);
    expect(total("failed")).toBeGreaterThanOrEqual(1);
    expect(overview.run_latency_ms.runs).toBeGreaterThanOrEqual(2);
    expect(overview.run_latency_ms.p50).not.toBeNull();
    expect(overview.tokens.find((m) => m.model === MODEL)?.requests).toBeGreaterThanOrEqual(1);

    // A key confined to another agent reads neither that session's outcome nor its runs.
    const otherAgent = (await t.client.beta.agents.create({ name: "read-models-other", model: MODEL })).id;
    const confined = await keyFor("runtime", undefined, [otherAgent]);
    await expectApiError(outcomes(confined, [failed]), Anthropic.NotFoundError, NOT_FOUND);
    expect((await confined.get<Overview>("/v1/awaken/overview")).tokens).toEqual([]);

    // Another workspace's overview is empty: the fold reads only the caller's sessions.
    const elsewhere = await other.get<Overview>("/v1/awaken/overview");
    expect(elsewhere.runs_by_hour.every((h) => h.completed === 0 && h.failed === 0)).toBe(true);
    expect(elsewhere.tokens).toEqual([]);
    expect(elsewhere.live_sessions).toEqual([]);
  });
});
