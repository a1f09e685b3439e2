/**
 * `awaken.beta.sessions.events.stream()` in process: its tail opens when `stream()` resolves, as an
 * HTTP stream's does once its headers came, so what the caller sends next reaches it as it commits
 * (from the committed-facts feed) instead of by a read of the history when iteration starts.
 */
import { describe, expect, it } from "vitest";
import type { HistoryReader, SessionRecord } from "../../src/coordinator/ports.js";
import type { SessionTail, TailItem, TailOpenOptions } from "../../src/coordinator/sessionTail.js";
import { InProcessEventStream } from "../../src/edge/managed-agents/inProcess/eventStream.js";

const SESSION = { id: "sesn_1", threadId: "sthr_1" } as SessionRecord;
const NO_HISTORY = {} as HistoryReader;

/** A tail that records when it was opened and yields one user message, then ends. */
function recordingTail() {
  const opened: TailOpenOptions[] = [];
  const tail: SessionTail = {
    open(_session, options) {
      opened.push(options);
      const items: TailItem[] = [
        {
          kind: "fact",
          fact: {
            id: "sevt_1",
            type: "user.message",
            body: { content: [{ type: "text", text: "hi" }] },
            sessionId: SESSION.id,
            threadId: SESSION.threadId,
            seq: 1,
            createdAt: 0,
          },
        },
      ];
      return (async function* () {
        yield* items;
      })();
    },
  };
  return { tail, opened };
}

describe("the in-process event stream", () => {
  it("opens its tail when stream() resolves, at the version read with the session, before any iteration", async () => {
    const { tail, opened } = recordingTail();
    const stream = await InProcessEventStream.open<{ type: string }>(tail, NO_HISTORY, SESSION, new Set(), 0);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ fromVersion: 0, previews: false });
    const seen: string[] = [];
    for await (const event of stream) seen.push(event.type);
    expect(seen).toEqual(["user.message"]);
    expect(opened).toHaveLength(1);
    expect(stream.controller.signal.aborted).toBe(true);
  });

  it("closing it before iterating closes the tail it opened", async () => {
    const { tail, opened } = recordingTail();
    const stream = await InProcessEventStream.open(tail, NO_HISTORY, SESSION, new Set(), 0);
    stream.controller.abort();
    expect(opened[0]?.signal.aborted).toBe(true);
  });
});
