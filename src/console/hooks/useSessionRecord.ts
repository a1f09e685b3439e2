import Anthropic from "@anthropic-ai/sdk";
import { useEffect, useState } from "react";
import { useApi } from "../api/apiContext.js";
import { problemOf } from "../api/client.js";
import { eventFeed } from "../api/eventFeed.js";
import type { SessionEvent, StreamEvent } from "../api/wire.js";
import {
  EMPTY_HISTORY,
  type LiveHistory,
  withCommitted,
  withStreamEvent,
} from "../projection/liveHistory.js";

export interface SessionRecord {
  history: LiveHistory;
  /** False until the history is read; then the stream's state. */
  loaded: boolean;
  live: boolean;
  problem: string | null;
}

const RECONNECT_MS = 1_000;

/** A client error other than a timeout, a conflict or a rate limit will answer the same again. */
function isFinal(error: unknown): boolean {
  const status = error instanceof Anthropic.APIError ? error.status : undefined;
  return status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status);
}

/**
 * One session's record: the stream is opened first, then the history is read and the stream's
 * items that arrived meanwhile are applied after it (the stream carries only what follows its
 * opening). After a drop it reconnects and reads the history again; ids keep that idempotent.
 * Given a thread id, the record is that thread's (the primary's is the session's own).
 */
export function useSessionRecord(sessionId: string, threadId: string | null = null): SessionRecord {
  const { client } = useApi();
  const [record, setRecord] = useState<SessionRecord>({
    history: EMPTY_HISTORY,
    loaded: false,
    live: false,
    problem: null,
  });
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    let history = EMPTY_HISTORY;
    // Another thread's record must not show under this one while this one is read.
    setRecord({ history, loaded: false, live: false, problem: null });
    const publish = (next: Partial<SessionRecord>) =>
      setRecord((previous) => ({ ...previous, history, ...next }));

    const connectOnce = async () => {
      // Each connection ends with its attempt, so a failed history read never leaves its stream open.
      const attempt = new AbortController();
      const stop = () => attempt.abort();
      signal.addEventListener("abort", stop);
      try {
        await connect(attempt.signal);
      } finally {
        stop();
        signal.removeEventListener("abort", stop);
      }
    };
    const feed = eventFeed(client, sessionId, threadId);
    const connect = async (signal: AbortSignal) => {
      const stream = await feed.stream(signal);
      let ready = false;
      const early: StreamEvent[] = [];
      const consumed = (async () => {
        for await (const item of stream) {
          if (!ready) {
            early.push(item);
            continue;
          }
          history = withStreamEvent(history, item);
          publish({});
        }
      })();
      // Awaited below; until then its failure must not surface as an unhandled rejection.
      consumed.catch(() => undefined);
      const events: SessionEvent[] = [];
      for await (const event of feed.list(signal)) {
        events.push(event);
      }
      // A reconnect drops the previews: what they previewed is committed by now, or was never.
      history = withCommitted({ ...history, previews: [] }, events);
      for (const item of early) history = withStreamEvent(history, item);
      ready = true;
      publish({ loaded: true, live: true, problem: null });
      await consumed;
    };

    void (async () => {
      while (!signal.aborted) {
        try {
          await connectOnce();
          publish({ live: false });
        } catch (error) {
          if (signal.aborted) return;
          publish({ live: false, problem: problemOf(error) });
          if (isFinal(error)) return;
        }
        if (
          history.events.some((e) => e.type === "session.deleted" || e.type === "session.status_terminated")
        )
          return;
        // An archived session reads as terminated without an event saying so: nothing more will come.
        const session = await client.beta.sessions.retrieve(sessionId, {}, { signal }).catch(() => null);
        if (session?.status === "terminated") return;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    })();
    return () => controller.abort();
  }, [client, sessionId, threadId]);
  return record;
}
