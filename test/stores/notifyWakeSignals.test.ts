import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  channelFor,
  NotifyWakeSignals,
  type SignalLog,
} from "../../src/stores/postgres/notifyWakeSignals.js";
import { openPostgres, type PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import {
  openTestPostgres,
  postgresUnavailable,
  type TestPostgres,
  testDatabaseUrl,
} from "../support/postgresFixtures.js";

// Two instances on one schema stand for two replicas sharing a database.
let fixture: TestPostgres | undefined;
const opened: NotifyWakeSignals[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  await fixture?.dispose();
  fixture = undefined;
});

const quiet: SignalLog = { info: () => {}, warn: () => {} };

async function replica(log: SignalLog = quiet, own?: PostgresHandle): Promise<NotifyWakeSignals> {
  const handle = own ?? (opened.length === 0 ? fixture!.handle : await fixture!.openReplica());
  const signals = new NotifyWakeSignals({
    db: handle.db,
    connectionString: testDatabaseUrl(),
    schema: fixture!.schema,
    log,
    retryMinMs: 50,
    retryMaxMs: 200,
  });
  opened.push(signals);
  await signals.whenListening();
  return signals;
}

function until<T>(what: string, register: (done: (value: T) => void) => void, ms = 3_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe("NotifyWakeSignals", () => {
  it("delivers thread, dispatch and cancel signals to the other replica, and once locally", async () => {
    const a = await replica();
    const b = await replica();
    const onA: string[] = [];
    a.onThreadCommitted("thr_1", (v) => onA.push(`thread:${v}`));
    a.onDispatchReady((run) => onA.push(`dispatch:${run}`));
    a.onRunCancelled((r) => onA.push(`cancel:${r}`));

    const version = until<number>("thread on B", (done) => b.onThreadCommitted("thr_1", done));
    a.threadCommitted("thr_1", 7);
    expect(await version).toBe(7);

    // A dispatch names its run across replicas (their claims account for it), or names none.
    const dispatched = until<string | null>("dispatch on B", (done) => b.onDispatchReady(done));
    a.dispatchReady("run_4");
    expect(await dispatched).toBe("run_4");
    const unnamed = until<string | null>("unnamed dispatch on B", (done) => b.onDispatchReady(done));
    a.dispatchReady();
    expect(await unnamed).toBeNull();

    const cancelled = until<string>("cancel on B", (done) => b.onRunCancelled(done));
    a.runCancelled("run_9");
    expect(await cancelled).toBe("run_9");

    // A's own notifications come back on its LISTEN; they must not fire its listeners again.
    await settle();
    expect(onA).toEqual(["thread:7", "dispatch:run_4", "dispatch:null", "cancel:run_9"]);
  });

  it("tells the other replica a key's revocation once it is sent, and this process once", async () => {
    const a = await replica();
    const b = await replica();
    const onA: Array<string | null> = [];
    a.onKeyRevoked((key) => onA.push(key));
    const onB: Array<string | null> = [];
    b.onKeyRevoked((key) => onB.push(key));
    const heard = until<string | null>("revocation on B", (done) => b.onKeyRevoked(done));
    await a.keyRevoked("key_01");
    expect(onA).toEqual(["key_01"]);
    expect(await heard).toBe("key_01");
    await settle();
    expect(onA).toEqual(["key_01"]);
    expect(onB).toEqual(["key_01"]);
  });

  it("ignores a kind it does not know (a newer replica's), without a warning, and hears the next", async () => {
    const warnings: object[] = [];
    const b = await replica({ info: () => {}, warn: (o) => warnings.push(o) });
    const heard: Array<string | null> = [];
    b.onKeyRevoked((key) => heard.push(key));
    b.onDispatchReady((run) => heard.push(`dispatch:${run}`));
    const next = until<string | null>("the known notice", (done) => b.onKeyRevoked(done));
    const newer = new pg.Client({ connectionString: testDatabaseUrl() });
    await newer.connect();
    try {
      for (const payload of [
        { from: "newer", kind: "rotated", key: "key_02" },
        { from: "newer", kind: "revoked", key: "key_03" },
      ])
        await newer.query("select pg_notify($1, $2)", [b.channel, JSON.stringify(payload)]);
    } finally {
      await newer.end();
    }
    expect(await next).toBe("key_03");
    expect(heard).toEqual(["key_03"]);
    expect(warnings).toEqual([]);
  });

  it("does not hear replicas of another schema (channels are per schema)", () => {
    expect(channelFor("a")).not.toBe(channelFor("b"));
    expect(Buffer.byteLength(channelFor("x".repeat(63)))).toBeLessThanOrEqual(63);
  });

  it("reconnects after its LISTEN connection is terminated, logs it, and delivers again", async () => {
    const events: string[] = [];
    const log: SignalLog = { info: (_o, m) => events.push(m), warn: (_o, m) => events.push(m) };
    const a = await replica();
    const b = await replica(log);
    const before = b.listenerPid;
    expect(before).not.toBeNull();
    // Revocations sent while it was deaf are lost: it says every cached answer is suspect.
    const suspect = until<void>("revocations suspect", (done) =>
      b.onKeyRevoked((key) => key === null && done()),
    );

    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ killed: boolean }>("select pg_terminate_backend($1) as killed", [
        before,
      ]);
      expect(rows[0]?.killed).toBe(true);
    } finally {
      await admin.end();
    }

    await until<void>("reconnect", (done) => {
      const check = setInterval(() => {
        if (b.listenerPid !== null && b.listenerPid !== before) {
          clearInterval(check);
          done();
        }
      }, 20);
    });
    expect(events).toContain("wake LISTEN connection lost; reconnecting");
    expect(events).toContain("wake LISTEN reconnected");
    await suspect;

    const version = until<number>("thread on B after reconnect", (done) =>
      b.onThreadCommitted("thr_2", done),
    );
    a.threadCommitted("thr_2", 3);
    expect(await version).toBe(3);
  });

  it("a failed publish is logged and swallowed: the commit it follows already happened", async () => {
    const warnings: string[] = [];
    const pool = await openPostgres(testDatabaseUrl(), { schema: fixture!.schema, maxConnections: 1 });
    const a = await replica({ info: () => {}, warn: (_o, m) => warnings.push(m) }, pool);
    const heard: number[] = [];
    a.onThreadCommitted("thr_3", (v) => heard.push(v));
    await pool.close(); // the pool that publishes is gone
    expect(() => a.threadCommitted("thr_3", 1)).not.toThrow();
    expect(heard).toEqual([1]);
    await until<void>("the warning", (done) => {
      const check = setInterval(() => {
        if (warnings.some((w) => w.startsWith("wake NOTIFY failed"))) {
          clearInterval(check);
          done();
        }
      }, 20);
    });
  });
});
