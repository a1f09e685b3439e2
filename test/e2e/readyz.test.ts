import { connect, createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { OffsetClock } from "../support/offsetClock.js";
import { emptySchema, postgresUnavailable, testDatabaseUrl } from "../support/postgresFixtures.js";
import { sleep } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const servers: TestServer[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  servers.push(server);
  return server;
}

/** `/readyz` without any credentials, as a load balancer probes it. */
async function readyz(server: TestServer): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.server.url}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const READY = { status: "ready", checks: { database: "ok", migrations: "current", workers: "polling" } };

/** A byte-level TCP relay to PostgreSQL that the test can cut (every connection reset, new ones refused) and restore. */
async function cuttablePostgresRelay(
  target: string,
): Promise<{ port: number; cut(): void; restore(): void }> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let cut = false;
  const relay: Server = createServer((client) => {
    if (cut) return client.destroy();
    const server = connect(Number(upstream.port || 5432), upstream.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        server.destroy();
      });
    }
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        relay.close(() => resolve());
      }),
  );
  const address = relay.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    cut: () => {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore: () => {
      cut = false;
    },
  };
}

describe("GET /readyz", () => {
  it("is ready on SQLite with polling workers, and says nothing but the checks", async () => {
    const server = await serve();
    const { status, body } = await readyz(server);
    expect(status).toBe(200);
    expect(body).toEqual(READY);
  });

  it('reports workers "none" for a server started with --workers 0', async () => {
    const server = await serve({ workers: 0 });
    const { status, body } = await readyz(server);
    expect(status).toBe(200);
    expect(body).toEqual({ ...READY, checks: { ...READY.checks, workers: "none" } });
  });

  describe("on PostgreSQL", () => {
    it("is ready on a migrated schema, and 503 naming the migrations once one is missing", async (ctx) => {
      const reason = postgresUnavailable();
      if (reason) ctx.skip(reason);
      const schema = await emptySchema();
      cleanups.push(() => schema.drop());
      const clock = new OffsetClock();
      const server = await serve({ databaseUrl: schema.url, clock });
      expect(await readyz(server)).toEqual({ status: 200, body: READY });

      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      await client.query(
        "delete from kysely_migration where name = (select max(name) from kysely_migration)",
      );
      await client.end();
      clock.advance(1_100); // past the cached answer
      const { status, body } = await readyz(server);
      expect(status).toBe(503);
      expect(body).toMatchObject({ status: "unready", checks: { database: "ok", migrations: "behind" } });
      expect(body.reason).toMatch(/^migrations: /);
    });

    it("answers 503 naming the database while PostgreSQL is unreachable, and ready again after", async (ctx) => {
      const reason = postgresUnavailable();
      if (reason) ctx.skip(reason);
      const schema = await emptySchema();
      cleanups.push(() => schema.drop());
      const relay = await cuttablePostgresRelay(testDatabaseUrl());
      const viaRelay = new URL(schema.url);
      viaRelay.hostname = "127.0.0.1";
      viaRelay.port = String(relay.port);
      const clock = new OffsetClock();
      const server = await serve({ databaseUrl: viaRelay.toString(), clock });
      expect((await readyz(server)).status).toBe(200);

      relay.cut();
      clock.advance(1_100); // past the cached answer
      const started = Date.now();
      const { status, body } = await readyz(server);
      expect(Date.now() - started).toBeLessThan(2_000); // bounded by the probe's own timeout
      expect(status).toBe(503);
      expect(body).toMatchObject({
        status: "unready",
        checks: { database: "unreachable", migrations: "unknown", workers: "polling" },
      });
      expect(body.reason).toMatch(/^database: /);
      // No address, port or user of the database in an unauthenticated answer.
      expect(JSON.stringify(body)).not.toContain(String(relay.port));
      expect(JSON.stringify(body)).not.toContain(viaRelay.username || "postgres");

      relay.restore();
      const deadline = Date.now() + 10_000;
      let again = await readyz(server);
      while (again.status !== 200 && Date.now() < deadline) {
        await sleep(200);
        again = await readyz(server);
      }
      expect(again).toEqual({ status: 200, body: READY });
    });
  });
});
