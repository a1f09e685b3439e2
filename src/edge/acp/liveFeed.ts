import type { ServerSessions, WireEvent } from "./serverSessions.js";

/** The preview frames of the live tail: never stored, never deduplicated. */
export const PREVIEW_TYPES = new Set(["event_start", "event_delta"]);

const RECONNECTS = 5;
const RECONNECT_BASE_MS = 250;

/**
 * A session's events after `afterId` (an event this process posted), each once: the live tail
 * that was open before the post, and after a dropped connection a new tail plus the committed
 * history since `afterId`, so a reconnect loses nothing and repeats nothing. Ends when `signal`
 * aborts; throws after repeated failed reconnects.
 */
export async function* followSession(
  api: ServerSessions,
  sessionId: string,
  opened: AsyncIterable<WireEvent>,
  afterId: string,
  signal: AbortSignal,
): AsyncGenerator<WireEvent> {
  const seen = new Set<string>();
  let stream = opened;
  let passed = false;
  let failures = 0;
  let lastError: unknown;
  for (;;) {
    try {
      for await (const event of stream) {
        if (signal.aborted) return;
        if (!passed) {
          // Older than the post: the tail was opened just before it.
          passed = event.id === afterId;
          continue;
        }
        failures = 0;
        if (PREVIEW_TYPES.has(event.type)) yield event;
        else if (!seen.has(event.id)) {
          seen.add(event.id);
          yield event;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      lastError = error;
    }
    if (signal.aborted) return;
    // A tail that closes without an error is reconnected too, within the same bound.
    if (++failures > RECONNECTS) throw lastError ?? new Error("the session's event stream keeps closing");
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_BASE_MS * 2 ** (failures - 1)));
    if (signal.aborted) return;
    stream = await api.stream(sessionId, signal);
    // What was committed while no tail was open.
    let past = false;
    for await (const event of api.history(sessionId, signal)) {
      if (!past) {
        past = event.id === afterId;
        continue;
      }
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      yield event;
    }
    passed = true;
  }
}
