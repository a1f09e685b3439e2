import { afterEach, describe, expect, it } from "vitest";
import {
  type PushOutboxStore,
  type PushSubscription,
  wakingOnSubscribe,
} from "../../src/coordinator/pushOutbox.js";
import { A2aPusher } from "../../src/edge/a2a/push/a2aPusher.js";
import { DEFAULT_PUSH_PACING } from "../../src/edge/a2a/push/pushPacing.js";
import { WebhookTargets } from "../../src/edge/http/webhookTargets.js";
import { type Clock, systemClock } from "../../src/kernel/clock.js";
import type { PushDeliveryOutcome } from "../../src/kernel/metrics.js";
import { OutboundConnector, type Resolve } from "../../src/kernel/outboundConnector.js";
import { OutboundPolicy } from "../../src/kernel/outboundPolicy.js";
import { SqlPushOutboxStore } from "../../src/stores/sql/sqlPushOutboxStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { ManualClock } from "../support/storeFixtures.js";
import { startWebhookReceiver } from "../support/webhookReceiver.js";

// The deliverer against a real SQLite outbox and a real receiver on the loopback, with a resolver
// the test controls: a name that resolved to a public address when the config was set and to the
// loopback at delivery time (DNS rebinding) is refused then; failures back off and give up.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp<C extends Clock = ManualClock>(
  policy: OutboundPolicy,
  resolve: Resolve,
  pacing = {},
  clock: C = new ManualClock() as Clock as C,
) {
  const handle = await openSqlite(":memory:");
  const receiver = await startWebhookReceiver();
  const connector = new OutboundConnector({ policy, resolve });
  cleanups.push(
    () => handle.close(),
    () => receiver.close(),
    () => connector.close(),
  );
  const claims: number[] = [];
  const store = countingClaims(new SqlPushOutboxStore(handle.db, "sqlite"), claims);
  const outcomes: PushDeliveryOutcome[] = [];
  const logged: string[] = [];
  const log = {
    warn: (f: object, m: string) => logged.push(JSON.stringify({ ...f, m })),
    debug: (f: object, m: string) => logged.push(JSON.stringify({ ...f, m })),
  };
  const pusher = new A2aPusher({
    store,
    outbound: connector,
    history: async () => [],
    clock,
    pacing: { ...DEFAULT_PUSH_PACING, retryBaseMs: 100, maxAttempts: 3, ...pacing },
    log,
    counted: (o) => outcomes.push(o),
  });
  const port = new URL(receiver.url).port;
  cleanups.push(() => pusher.stop());
  return {
    store,
    clock,
    receiver,
    pusher,
    outcomes,
    logged,
    port,
    claims,
    targets: new WebhookTargets(connector),
  };
}

/** The store, recording how many rows each claim leased. */
function countingClaims(store: PushOutboxStore, claims: number[]): PushOutboxStore {
  return {
    ...wakingOnSubscribe(store, () => {}),
    claim: async (owner, now, leaseMs, limit) => {
      const claimed = await store.claim(owner, now, leaseMs, limit);
      claims.push(claimed.length);
      return claimed;
    },
  };
}

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function subscription(url: string): PushSubscription {
  return {
    workspaceId: "wrkspc_a",
    taskId: "sesn_1.sevt_1",
    configId: "c1",
    agentId: "agent_1",
    sessionId: "sesn_1",
    threadId: "thrd_1",
    url,
    token: "the-token",
    authScheme: "Bearer",
    authCredentials: "the-credentials",
    wireVersion: "1.0",
    cursorSeq: 1,
    finished: true,
    createdAt: 0,
  };
}

const body = { body: '{"task":{}}', contentType: "application/a2a+json" };

describe("the push deliverer", () => {
  it("delivers to an operator-listed host with the token, the credentials and a delivery id", async () => {
    const { store, clock, receiver, pusher, outcomes, logged, port } = await setUp(
      OutboundPolicy.allowing("hooks.internal"),
      async () => [{ address: "127.0.0.1", family: 4 }],
    );
    await store.subscribe(subscription(`http://hooks.internal:${port}/hook`), body, clock.now());
    await pusher.runOnce();
    expect(outcomes).toEqual(["delivered"]);
    const [got] = receiver.received;
    expect(got?.headers["x-a2a-notification-token"]).toBe("the-token");
    expect(got?.headers.authorization).toBe("Bearer the-credentials");
    expect(got?.headers["x-awaken-delivery-id"]).toBe("sesn_1.sevt_1/c1/7");
    expect(got?.body).toEqual({ task: {} });
    await pusher.runOnce();
    expect(receiver.received).toHaveLength(1);
    expect(logged.join("\n")).not.toMatch(/the-token|the-credentials/);
  });

  it("refuses at delivery a name that now resolves to the loopback (DNS rebinding)", async () => {
    let address = "93.184.216.34";
    const { store, clock, receiver, pusher, outcomes, targets, port } = await setUp(
      OutboundPolicy.publicOnly(),
      async () => [{ address, family: 4 }],
    );
    const url = `https://rebind.example:${port}/hook`;
    expect(await targets.refusal(url)).toBeNull();
    await store.subscribe(subscription(url), body, clock.now());
    address = "127.0.0.1";
    await pusher.runOnce();
    expect(outcomes).toEqual(["refused"]);
    expect(receiver.received).toEqual([]);
    expect(await targets.refusal(url)).toMatch(/loopback, link-local, private or reserved/);
  });

  it("backs off after each failure and gives up after the last attempt, with one delivery id", async () => {
    const { store, clock, receiver, pusher, outcomes, port } = await setUp(
      OutboundPolicy.allowing("127.0.0.1"),
      async () => [],
    );
    receiver.status = 503;
    await store.subscribe(subscription(`http://127.0.0.1:${port}/hook`), body, clock.now());
    await pusher.runOnce();
    expect(outcomes).toEqual(["retried"]);
    await pusher.runOnce(); // not due yet: 100 ms backoff
    expect(receiver.received).toHaveLength(1);
    clock.advance(100);
    await pusher.runOnce();
    expect(outcomes).toEqual(["retried", "retried"]);
    clock.advance(150); // 200 ms now
    await pusher.runOnce();
    expect(receiver.received).toHaveLength(2);
    clock.advance(50);
    await pusher.runOnce();
    expect(outcomes).toEqual(["retried", "retried", "abandoned"]);
    clock.advance(10_000);
    await pusher.runOnce();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers["x-awaken-delivery-id"])).size).toBe(1);
  });

  it("claims nothing while idle: it sleeps until the next row falls due, and a config set wakes it", async () => {
    const { store, receiver, pusher, outcomes, claims, port } = await setUp(
      OutboundPolicy.allowing("127.0.0.1"),
      async () => [],
      { pollMs: 10, idlePollMs: 60_000, retryBaseMs: 300 },
      systemClock,
    );
    const waking = wakingOnSubscribe(store, () => pusher.wake());
    const settled = async (count: number) => {
      await until(() => claims.length === count);
      await new Promise((resolve) => setTimeout(resolve, 150));
    };
    pusher.start();
    // An empty outbox: one look at start, then no claim for the idle wait (60 s here).
    await settled(1);
    expect(claims).toEqual([0]);

    // A config set here is delivered at once, not after the idle wait; the round after the one
    // that delivered looks once more, then the deliverer is idle again.
    await waking.subscribe(subscription(`http://127.0.0.1:${port}/hook`), body, Date.now());
    await settled(3);
    expect(outcomes).toEqual(["delivered"]);
    expect(claims).toEqual([0, 1, 0]);

    // A failed attempt is claimed again when its backoff ends, with no claim in between but the
    // look right after the attempt.
    receiver.status = 503;
    await waking.subscribe(
      { ...subscription(`http://127.0.0.1:${port}/hook`), configId: "c2" },
      body,
      Date.now(),
    );
    await until(() => outcomes.length === 2);
    receiver.status = 200;
    await settled(7);
    expect(outcomes).toEqual(["delivered", "retried", "delivered"]);
    expect(claims).toEqual([0, 1, 0, 1, 0, 1, 0]);
    expect(receiver.received).toHaveLength(3);
  });
});
