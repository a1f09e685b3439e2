import { describe, expect, it } from "vitest";
import {
  type HeldClaim,
  POLLER_SEEN_MS,
  REMOTE_SEEN_MS,
  ROSTER_LIMIT,
  rosterOf,
  type SelfHostedPoller,
  splitOwner,
  WorkerRoster,
  type WorkerRosterStore,
} from "../../src/coordinator/workerRoster.js";

// The roster's pure rules: claims grouped by worker, this replica's in-process slots merged in,
// recently seen remote workers added, and idle remote workers shown only where they may be.

const NOW = 1_800_000_000_000;
const OWN = { identity: "local.own.i1", slots: 4 };

function claim(owner: string, runId: string, overrides: Partial<HeldClaim> = {}): HeldClaim {
  return {
    runId,
    sessionId: `sesn_${runId}`,
    owner,
    epoch: 1,
    leaseExpiresAt: NOW + 30_000,
    renewedAt: NOW - 1_000,
    ...overrides,
  };
}

const presence = (overrides: Partial<Parameters<typeof rosterOf>[1]> = {}) => ({
  inProcess: OWN,
  remoteSeen: [],
  showIdleRemotes: false,
  localIdPrefix: "local.",
  ...overrides,
});

describe("the worker roster, pure", () => {
  it("splits an owner into the worker's identity and its slot", () => {
    expect(splitOwner("local.own.i1/3")).toStrictEqual({ identity: "local.own.i1", slot: "3" });
    expect(splitOwner("remote.w.i2")).toStrictEqual({ identity: "remote.w.i2", slot: "" });
  });

  it("this replica's in-process worker is listed first with its slots, alive even when it holds nothing", () => {
    expect(rosterOf([], presence(), NOW)).toStrictEqual([
      {
        identity: "local.own.i1",
        kind: "in_process",
        thisReplica: true,
        alive: true,
        lastSeenAt: null,
        slots: 4,
        claims: [],
      },
    ]);
    expect(rosterOf([], presence({ inProcess: null }), NOW)).toStrictEqual([]);
  });

  it("merges the in-process worker's claims into its own entry, slot by slot", () => {
    const [own, ...rest] = rosterOf(
      [claim("local.own.i1/0", "r1"), claim("local.own.i1/2", "r2", { renewedAt: NOW - 500 })],
      presence(),
      NOW,
    );
    expect(rest).toStrictEqual([]);
    expect(own?.slots).toBe(4);
    expect(own?.lastSeenAt).toBe(NOW - 500);
    expect(own?.claims.map((c) => [c.runId, c.slot, c.lapsed])).toStrictEqual([
      ["r1", "0", false],
      ["r2", "2", false],
    ]);
  });

  it("another replica's in-process worker is in_process but not this replica's, its slots unknown; alive only on a live lease", () => {
    const workers = rosterOf(
      [
        claim("local.other.i1/0", "r1"),
        claim("local.stale.i1/0", "r2", { leaseExpiresAt: NOW - 1, renewedAt: NOW - 60_000 }),
        claim("local.nolease.i1/0", "r3", { leaseExpiresAt: null, renewedAt: NOW - 70_000 }),
      ],
      presence(),
      NOW,
    );
    expect(workers.map((w) => [w.identity, w.kind, w.thisReplica, w.alive, w.slots])).toStrictEqual([
      ["local.own.i1", "in_process", true, true, 4],
      ["local.other.i1", "in_process", false, true, null],
      ["local.stale.i1", "in_process", false, false, null],
      ["local.nolease.i1", "in_process", false, false, null],
    ]);
    expect(workers[2]?.claims[0]?.lapsed).toBe(true);
    expect(workers[3]?.claims[0]?.lapsed).toBe(true);
  });

  it("a lease that ends exactly now has lapsed", () => {
    const [, worker] = rosterOf([claim("remote.w.i1/0", "r1", { leaseExpiresAt: NOW })], presence(), NOW);
    expect(worker?.claims[0]?.lapsed).toBe(true);
    expect(worker?.alive).toBe(false);
  });

  it("a remote worker seen recently is alive even with only lapsed claims; one seen long ago is not", () => {
    const lapsed = { leaseExpiresAt: NOW - 10_000, renewedAt: NOW - 40_000 };
    const workers = rosterOf(
      [claim("remote.recent.i1/0", "r1", lapsed), claim("remote.old.i1/0", "r2", lapsed)],
      presence({
        remoteSeen: [
          { identity: "remote.recent.i1", lastSeenAt: NOW - 5_000 },
          { identity: "remote.old.i1", lastSeenAt: NOW - REMOTE_SEEN_MS },
        ],
      }),
      NOW,
    );
    expect(workers.map((w) => [w.identity, w.kind, w.alive, w.lastSeenAt])).toStrictEqual([
      ["local.own.i1", "in_process", true, null],
      ["remote.recent.i1", "remote", true, NOW - 5_000],
      ["remote.old.i1", "remote", false, NOW - 40_000],
    ]);
  });

  it("idle remote workers (holding none of the workspace's runs) are shown only where the presence allows", () => {
    const remoteSeen = [
      { identity: "remote.busy.i1", lastSeenAt: NOW - 1_000 },
      { identity: "remote.idle.i1", lastSeenAt: NOW - 2_000 },
    ];
    const claims = [claim("remote.busy.i1/0", "r1")];
    expect(rosterOf(claims, presence({ remoteSeen }), NOW).map((w) => w.identity)).toStrictEqual([
      "local.own.i1",
      "remote.busy.i1",
    ]);
    const shown = rosterOf(claims, presence({ remoteSeen, showIdleRemotes: true }), NOW);
    expect(shown.map((w) => [w.identity, w.alive, w.claims.length])).toStrictEqual([
      ["local.own.i1", true, 0],
      ["remote.busy.i1", true, 1],
      ["remote.idle.i1", true, 0],
    ]);
  });

  it("orders this replica first, then the alive, then the most recently seen, then by identity", () => {
    const workers = rosterOf(
      [
        claim("remote.b.i1/0", "r1", { renewedAt: NOW - 3_000 }),
        claim("remote.a.i1/0", "r2", { renewedAt: NOW - 3_000 }),
        claim("remote.c.i1/0", "r3", { renewedAt: NOW - 1_000 }),
        claim("remote.dead.i1/0", "r4", { leaseExpiresAt: NOW - 1, renewedAt: NOW }),
      ],
      presence(),
      NOW,
    );
    expect(workers.map((w) => w.identity)).toStrictEqual([
      "local.own.i1",
      "remote.c.i1",
      "remote.a.i1",
      "remote.b.i1",
      "remote.dead.i1",
    ]);
  });
});

describe("WorkerRoster.list", () => {
  const poller = (workerId: string, lastPolledAt: number): SelfHostedPoller => ({
    environmentId: "env_1",
    workerId,
    lastPolledAt,
    work: [],
  });
  const rosterWith = (claims: HeldClaim[], pollers: SelfHostedPoller[], workspaces: string[] = []) => {
    const asked: string[] = [];
    const store: WorkerRosterStore = {
      heldClaims: async (workspaceId, limit) => {
        asked.push(`claims ${workspaceId} ${limit}`);
        return claims.slice(0, limit);
      },
      pollers: async (workspaceId, limit) => {
        asked.push(`pollers ${workspaceId} ${limit}`);
        return pollers.slice(0, limit);
      },
    };
    const roster = new WorkerRoster(
      store,
      {
        inProcess: () => null,
        remoteSeen: () => [{ identity: "remote.idle.i1", lastSeenAt: NOW - 1_000 }],
        showsIdleRemotes: (workspaceId) => workspaces.includes(workspaceId),
      },
      { now: () => NOW } as never,
      "local.",
    );
    return { roster, asked };
  };

  it("reads one workspace's claims and pollers, one past the limit to tell truncation", async () => {
    const { roster, asked } = rosterWith([], []);
    expect(await roster.list("wrkspc_a")).toStrictEqual({ workers: [], selfHosted: [], truncated: false });
    expect(asked.sort()).toStrictEqual([
      `claims wrkspc_a ${ROSTER_LIMIT + 1}`,
      `pollers wrkspc_a ${ROSTER_LIMIT + 1}`,
    ]);
  });

  it("shows the idle remote worker to the workspace the presence names and no other", async () => {
    const { roster } = rosterWith([], [], ["wrkspc_default"]);
    expect((await roster.list("wrkspc_default")).workers.map((w) => w.identity)).toStrictEqual([
      "remote.idle.i1",
    ]);
    expect((await roster.list("wrkspc_a")).workers).toStrictEqual([]);
  });

  it("a poller is alive within its window after its last poll", async () => {
    const { roster } = rosterWith(
      [],
      [poller("fresh", NOW - 1_000), poller("edge", NOW - POLLER_SEEN_MS), poller("gone", NOW - 600_000)],
    );
    expect((await roster.list("wrkspc_a")).selfHosted.map((p) => [p.workerId, p.alive])).toStrictEqual([
      ["fresh", true],
      ["edge", false],
      ["gone", false],
    ]);
  });

  it("cuts claims and pollers at the limit and says so", async () => {
    const claims = Array.from({ length: ROSTER_LIMIT + 5 }, (_, i) => claim(`remote.w.i1/${i}`, `r${i}`));
    const many = rosterWith(claims, []);
    const view = await many.roster.list("wrkspc_a");
    expect(view.truncated).toBe(true);
    expect(view.workers[0]?.claims).toHaveLength(ROSTER_LIMIT);
    const pollers = Array.from({ length: ROSTER_LIMIT + 1 }, (_, i) => poller(`p${i}`, NOW));
    const viewP = await rosterWith([], pollers).roster.list("wrkspc_a");
    expect(viewP.truncated).toBe(true);
    expect(viewP.selfHosted).toHaveLength(ROSTER_LIMIT);
  });
});
