/**
 * Fault: kill -9 a worker mid-turn, after a tool result was committed and before
 * the next model turn finished. Another worker resumes from the last committed fact and finishes.
 *
 * One `awaken up --workers 0` replica on a fresh PostgreSQL schema, two remote `awaken worker`
 * processes (`--concurrency 1` each, so the worker that dies holds exactly one run and the other
 * sessions visibly keep running on the survivor). Three sessions run concurrently through the
 * official SDK: `call get_weather {...}` → `requires_action` → `user.custom_tool_result`. As soon as
 * one session's stream previews the answer that follows its tool result (`event_start`: the next
 * model turn is streaming, slowly: the offline model waits AWAKEN_OFFLINE_DELAY_MS before each word;
 * nothing of a request is committed before its answer), the worker holding that run (its owner in
 * `runs`) is SIGKILLed. The survivor must reclaim the run once the lease ends (it lapses, or the
 * coordinator ends it a grace after the dead worker's connection dropped) (epoch + 1), ask the
 * model again and end the turn, the cut-off request leaving nothing in history; every session must
 * finish, and the history invariants must hold.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PRESENCE_GRACE_MS } from "../../src/coordinator/workerConnections.js";
import { logLines, until, useFaultCluster } from "../support/faultCluster.js";
import { checkHistoryInvariants, sessionFacts } from "../support/historyInvariants.js";
import {
  history,
  isActionIdle,
  isEndTurnIdle,
  MODEL,
  StreamReader,
  stopReason,
  textOf,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
} from "../support/sdkHelpers.js";
import type { WorkerProcess } from "../support/workerProcess.js";

const LEASE_MS = 1500;
/** Per streamed word: the answer to a tool result is 10 words, so that model call lasts ~3 s. */
const WORD_DELAY_MS = 300;
const CITIES = ["Paris", "Oslo", "Lima"];

const faultCluster = useFaultCluster({ leaseMs: LEASE_MS });

interface Drive {
  city: string;
  sessionId: string;
  /** The session's stream with message previews, open from before the first input. */
  stream: StreamReader;
  toolUseId?: string;
  /** Set once the tool result is committed (the send returned its echo). */
  toolResultId?: string;
}

interface RunRow {
  id: string;
  state: string;
  owner: string | null;
  epoch: number;
}

const resultText = (city: string) => `sunny, 21 C in ${city}`;

/** The worker's identity (`<id>.<incarnation>`), the prefix of every owner it claims as. */
function identityOf(worker: WorkerProcess): string {
  const match = /Awaken worker (\S+) is running/.exec(worker.stdout());
  if (!match?.[1]) throw new Error(`no identity in the worker's output:\n${worker.stdout()}`);
  return match[1];
}

async function runsOf(db: pg.Client, where: string, params: unknown[]): Promise<RunRow[]> {
  const { rows } = await db.query<{ id: string; state: string; owner: string | null; epoch: string }>(
    `select id, state, owner, epoch from runs where ${where} order by id`,
    params,
  );
  return rows.map((r) => ({ id: r.id, state: r.state, owner: r.owner, epoch: Number(r.epoch) }));
}

async function scalar(db: pg.Client, sql: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ n: string | null }>(sql, params);
  const value = rows[0]?.n;
  if (value === undefined || value === null) throw new Error(`no value for ${sql}`);
  return Number(value);
}

/**
 * The preview of an answer streaming after the tool result and not committed yet, if the stream
 * shows one: the model request that answers the tool result is in flight.
 */
function previewAfterToolResult(events: WireEvent[], toolResultId: string): string | undefined {
  const from = events.findIndex((e) => e.id === toolResultId);
  if (from < 0) return undefined;
  const after = events.slice(from + 1);
  const committed = new Set(after.map((e) => e.id));
  for (const e of after) {
    const previewed = e.type === "event_start" ? (e.event as { id: string }).id : undefined;
    if (previewed !== undefined && !committed.has(previewed)) return previewed;
  }
  return undefined;
}

function isEndTurnFact(f: { type: string; body: Record<string, unknown> }): boolean {
  return f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";
}

describe("fault: a remote worker killed after a committed tool result", () => {
  it("SIGKILL mid-model-turn after user.custom_tool_result: the other worker resumes from the last fact and finishes", async () => {
    const c = faultCluster();
    const started = Date.now();
    const replica = await c.startReplica();
    const client = replica.client;
    const workerEnv = { AWAKEN_OFFLINE_DELAY_MS: String(WORD_DELAY_MS) };
    const workers = [
      await c.startWorker(replica.url, workerEnv, ["--concurrency", "1", "--id", "alpha"]),
      await c.startWorker(replica.url, workerEnv, ["--concurrency", "1", "--id", "beta"]),
    ];
    const identities = workers.map(identityOf);

    const agent = await client.beta.agents.create({ name: "Weather", model: MODEL, tools: [WEATHER_TOOL] });
    const environment = await client.beta.environments.create({ name: "weather" });
    const drives: Drive[] = [];
    for (const city of CITIES) {
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
      const stream = await StreamReader.open(client, session.id, { event_deltas: ["agent.message"] });
      drives.push({ city, sessionId: session.id, stream });
    }

    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    try {
      // Every session: ask for the tool, wait for requires_action, commit the tool result.
      const driving = Promise.all(
        drives.map(async (d) => {
          await client.beta.sessions.events.send(d.sessionId, {
            events: [userMessage(`call get_weather {"city": "${d.city}"}`)],
          });
          const parked = await until(
            `requires_action in the session for ${d.city}`,
            async () => {
              const events = await history(client, d.sessionId);
              return events.some(isActionIdle) ? events : null;
            },
            30_000,
            50,
          );
          const toolUse = parked.find((e) => e.type === "agent.custom_tool_use");
          expect(toolUse?.name).toBe("get_weather");
          expect(toolUse?.input).toEqual({ city: d.city });
          expect(stopReason(parked.find(isActionIdle))?.event_ids).toEqual([toolUse!.id]);
          d.toolUseId = toolUse!.id;
          const echo = await client.beta.sessions.events.send(d.sessionId, {
            events: [
              {
                type: "user.custom_tool_result",
                custom_tool_use_id: toolUse!.id,
                content: [{ type: "text", text: resultText(d.city) }],
              },
            ],
          });
          const [result] = echo.data as unknown as WireEvent[];
          expect(result?.type).toBe("user.custom_tool_result");
          d.toolResultId = result!.id;
        }),
      );
      // Surfaced by `await driving` below; never an unhandled rejection while the kill is prepared.
      driving.catch(() => undefined);

      // The first session whose next model turn (after its committed tool result) is streaming.
      const hit = await until(
        "a session's model request after its tool result",
        () => {
          for (const d of drives) {
            if (!d.toolResultId) continue;
            const previewId = previewAfterToolResult(d.stream.events, d.toolResultId);
            if (previewId) return { drive: d, previewId };
          }
          return null;
        },
        30_000,
        20,
      );
      const target = hit.drive;
      const [run, ...moreRuns] = await runsOf(db, "session_id = $1", [target.sessionId]);
      expect(moreRuns).toEqual([]);
      expect(run?.state).toBe("claimed");
      const victimIndex = identities.findIndex((id) => run?.owner?.startsWith(`${id}/`));
      expect(victimIndex, `owner ${run?.owner} is one of ${identities.join(", ")}`).toBeGreaterThanOrEqual(0);
      const victim = workers[victimIndex]!;
      const survivor = workers[1 - victimIndex]!;
      const killedEpoch = run!.epoch;

      // No one can see the worker's connection drop before this.
      const killSentAt = Date.now();
      victim.child.kill("SIGKILL");
      expect(await victim.exited).toBe("SIGKILL");
      const killedAt = Date.now();

      // What the dead worker left: exactly this run, still claimed at the same epoch, the tool
      // result committed and nothing after it (the request in flight had committed nothing).
      expect(
        await runsOf(db, "state = 'claimed' and owner like $1", [`${identities[victimIndex]}/%`]),
      ).toEqual([{ id: run!.id, state: "claimed", owner: run!.owner, epoch: killedEpoch }]);
      const leaseAtKill = await scalar(db, "select lease_expires_at as n from runs where id = $1", [run!.id]);
      const atKill = await sessionFacts(c.databaseUrl, target.sessionId);
      const resultSeq = atKill.find((f) => f.id === target.toolResultId)?.seq ?? -1;
      expect(resultSeq).toBeGreaterThan(0);
      expect(
        atKill.filter((f) => f.seq > resultSeq && (f.type.startsWith("span.") || f.type === "agent.message")),
      ).toEqual([]);
      expect(atKill.some((f) => f.id === hit.previewId)).toBe(false);
      expect(
        logLines(victim).some(
          (l) => l.msg === "run slice ended" && l.runId === run!.id && l.epoch === killedEpoch,
        ),
      ).toBe(false);
      // The kill hit one session; none of the others had finished: they go on without it.
      for (const d of drives.filter((other) => other !== target)) {
        const facts = await sessionFacts(c.databaseUrl, d.sessionId);
        expect(facts.some(isEndTurnFact), `session for ${d.city} already ended at the kill`).toBe(false);
      }

      await driving;
      const finished = await until(
        "every session's end_turn",
        async () => {
          const all = await Promise.all(drives.map((d) => history(client, d.sessionId)));
          return all.every((events) => events.some(isEndTurnIdle)) ? all : null;
        },
        40_000,
        100,
      );

      for (const [i, d] of drives.entries()) {
        const events = finished[i]!;
        const isTarget = d === target;
        const label = `session for ${d.city}${isTarget ? " (killed mid-turn)" : ""}`;
        expect(new Set(events.map((e) => e.id)).size, label).toBe(events.length);
        expect(
          events.filter((e) => e.type === "user.message"),
          label,
        ).toHaveLength(1);
        expect(
          events.filter((e) => e.type === "agent.custom_tool_use").map((e) => e.id),
          label,
        ).toEqual([d.toolUseId]);
        expect(
          events.filter((e) => e.type === "user.custom_tool_result").map((e) => e.id),
          label,
        ).toEqual([d.toolResultId]);
        // The answer to the tool result: once, after the tool result, then the turn ends.
        const resultAt = events.findIndex((e) => e.id === d.toolResultId);
        const answers = events.filter(
          (e) => e.type === "agent.message" && textOf(e).includes("Tool result received:"),
        );
        expect(answers, label).toHaveLength(1);
        expect(textOf(answers[0])).toBe(`[offline model] Tool result received: ${resultText(d.city)}`);
        expect(events.indexOf(answers[0]!), label).toBeGreaterThan(resultAt);
        expect(
          events.filter((e) => e.type === "agent.message"),
          label,
        ).toHaveLength(2);
        expect(events.filter(isActionIdle), label).toHaveLength(1);
        expect(events.filter(isEndTurnIdle), label).toHaveLength(1);
        expect(isEndTurnIdle(events.at(-1)!), label).toBe(true);
        // Every model request committed ended exactly once, none as an error: the killed request
        // committed nothing, and the one asked again answered after the tool result.
        const starts = events.filter((e) => e.type === "span.model_request_start");
        const ends = events.filter((e) => e.type === "span.model_request_end");
        expect(ends.map((e) => e.model_request_start_id).sort(), label).toEqual(
          starts.map((e) => e.id).sort(),
        );
        expect(starts, label).toHaveLength(2);
        expect(
          ends.map((e) => e.is_error),
          label,
        ).toEqual([false, false]);
        expect(events.indexOf(starts[1]!), label).toBeGreaterThan(resultAt);
        expect(events.indexOf(answers[0]!), label).toBeGreaterThan(events.indexOf(starts[1]!));
        if (isTarget) expect(events.some((e) => e.id === hit.previewId)).toBe(false);
      }

      // The killed claim was taken over at a higher epoch, and the survivor's log shows it ran the
      // resumed slice of that run to the end.
      const [after] = await runsOf(db, "id = $1", [run!.id]);
      expect(after?.state).toBe("done");
      expect(after!.epoch).toBeGreaterThan(killedEpoch);
      // The worker logs a slice's end after its last commit answered: the line may trail the run.
      const resumed = () =>
        logLines(survivor).filter(
          (l) => l.msg === "run slice ended" && l.runId === run!.id && Number(l.epoch) > killedEpoch,
        );
      await expect.poll(() => resumed().length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(resumed()).toEqual([expect.objectContaining({ epoch: after!.epoch, outcome: "settled" })]);
      expect(logLines(survivor).filter((l) => l.msg === "claim lost; abandoning run")).toEqual([]);
      expect(await runsOf(db, "state <> 'done'", [])).toEqual([]);

      const report = await checkHistoryInvariants(c.databaseUrl);
      expect(report.violations).toEqual([]);
      expect(report.sessions).toBe(CITIES.length);
      expect(report.runs).toBe(CITIES.length);

      // The survivor claimed only once the dead worker's lease had ended: it lapsed, or the
      // coordinator ended it a grace after the worker's presence connection dropped, whichever came
      // first. Its request (the start records when it began) began after that.
      const facts = await sessionFacts(c.databaseUrl, target.sessionId);
      const retried = facts.filter((f) => f.type === "span.model_request_start").at(-1);
      const retriedAt = Number(retried?.body.started_at);
      // (A timer and the wall clock may disagree by a millisecond.)
      expect(retriedAt).toBeGreaterThanOrEqual(Math.min(leaseAtKill, killSentAt + PRESENCE_GRACE_MS - 2));
      console.log(
        `remoteWorkerKilledAfterToolResult: killed ${identities[victimIndex]} holding ${run!.id} ` +
          `(epoch ${killedEpoch}) for ${target.city}; taken over at epoch ${after!.epoch}, request asked ` +
          `again ${retriedAt - killedAt} ms after the kill; ${report.events} events; ` +
          `total ${Date.now() - started} ms`,
      );
    } finally {
      for (const d of drives) await d.stream.close();
      await db.end();
    }
  }, 90_000);
});
