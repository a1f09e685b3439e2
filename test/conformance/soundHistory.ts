/**
 * What every scenario step checks in the committed history, whichever protocol wrote it: the
 * Managed events list is the session's facts in seq order with no gap, nothing is in it twice, each
 * user text went in exactly once, each call has at most one answer, and every run has come to rest.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { expect } from "vitest";
import { checkHistoryInvariants, sessionFacts } from "../support/historyInvariants.js";
import { history, sleep, textOf, type WireEvent } from "../support/sdkHelpers.js";
import { answeredCallId } from "./managedHistory.js";

export interface CommittedStore {
  client: Anthropic;
  /** The PostgreSQL URL (with its schema) the server writes to. */
  databaseUrl: string;
}

/**
 * Asserts the invariants for `sessionId`, whose user messages must be exactly `said` in order,
 * and returns its events list.
 */
export async function expectSoundHistory(
  store: CommittedStore,
  sessionId: string,
  said: readonly string[],
): Promise<WireEvent[]> {
  const events = await history(store.client, sessionId);
  const ids = events.map((e) => e.id);
  expect(new Set(ids).size, "an event id listed twice").toBe(ids.length);

  const facts = await sessionFacts(store.databaseUrl, sessionId);
  expect(
    facts.map((f) => f.seq),
    "the session's seqs run 1..N",
  ).toEqual(facts.map((_, i) => i + 1));
  // The server's own bookkeeping facts (`awaken.*`) never go on any wire.
  expect(ids, "the events list is the committed facts in seq order").toEqual(
    facts.filter((f) => !f.type.startsWith("awaken.")).map((f) => f.id),
  );

  expect(
    events.filter((e) => e.type === "user.message").map((e) => textOf(e)),
    "each user text entered once, in order",
  ).toEqual(said);
  const answers = events.flatMap((e) => answeredCallId(e) ?? []);
  expect(answers.length, "a call answered twice").toBe(new Set(answers).size);
  const confirmations = events.flatMap((e) =>
    e.type === "user.tool_confirmation" ? [e.tool_use_id as string] : [],
  );
  expect(confirmations.length, "a call confirmed twice").toBe(new Set(confirmations).size);

  await expectRunsAtRest(store.databaseUrl);
  return events;
}

/**
 * The whole schema's invariants. A run's state settles just after the idle that ends its turn is
 * committed, so only that one rule is given a moment; the others must hold at once.
 */
async function expectRunsAtRest(databaseUrl: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const report = await checkHistoryInvariants(databaseUrl);
    const unsettled = report.violations.filter((v) => /^run \S+ is /.test(v));
    const broken = report.violations.filter((v) => !unsettled.includes(v));
    expect(broken).toEqual([]);
    if (unsettled.length === 0 || Date.now() > deadline) {
      expect(unsettled).toEqual([]);
      return;
    }
    await sleep(50);
  }
}
