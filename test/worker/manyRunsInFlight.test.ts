/**
 * More than ten runs in flight in one worker: nothing may pile listeners onto a shared emitter or
 * signal (Node warns past ten: `MaxListenersExceededWarning`, a leak in the making).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, isEndTurnIdle, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const RUNS = 16;
let t: TestServer;
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

beforeEach(async () => {
  warnings.length = 0;
  process.on("warning", onWarning);
  // Each word streams 20 ms apart, so every run is still in its model call when the last starts.
  process.env.AWAKEN_OFFLINE_DELAY_MS = "20";
  t = await startTestServer({ workers: RUNS });
});
afterEach(async () => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
  process.off("warning", onWarning);
  await t.close();
});

describe("a worker with many runs in flight", () => {
  it(`${RUNS} concurrent runs finish without a MaxListenersExceededWarning`, async () => {
    const sessions = await Promise.all(
      Array.from({ length: RUNS }, () => createSession(t.client).then(({ session }) => session.id)),
    );
    await Promise.all(
      sessions.map((id) =>
        t.client.beta.sessions.events.send(id, {
          events: [userMessage("many runs at once, each one streaming its words slowly")],
        }),
      ),
    );
    const histories = await Promise.all(
      sessions.map((id) => waitForHistory(t.client, id, (h) => h.some(isEndTurnIdle), 20_000)),
    );
    // They really overlapped: every run had started its model call before the first one ended.
    const startedAt = histories.map((h) => Date.parse(spanAt(h, "span.model_request_start")));
    const endedAt = histories.map((h) => Date.parse(spanAt(h, "span.model_request_end")));
    expect(Math.max(...startedAt)).toBeLessThan(Math.min(...endedAt));
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  }, 30_000);
});

function spanAt(history: Array<{ type: string } & Record<string, unknown>>, type: string): string {
  const event = history.find((e) => e.type === type);
  return String(event?.processed_at);
}
