import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import type { SessionEvent } from "../api/wire.js";
import { type AwaitedCall, pendingApprovals, runState } from "../projection/runState.js";
import { threadAsks } from "../projection/threadAsks.js";
import { useSessionHintsLive } from "./useSessionHints.js";

export interface PendingApproval extends AwaitedCall {
  sessionId: string;
  sessionTitle: string | null;
  agentName: string;
  /** When the call was committed: how long it has waited. */
  askedAt: string | null;
  /** Set when a subagent's thread asks (the answer is routed there by the call's id). */
  threadId?: string;
}

/** How many idle or running sessions, newest first, are checked for asks, and how far back each is read. */
const SESSIONS_CHECKED = 50;
const EVENTS_READ = 200;
/** How often the list is read while the hint stream is down. */
const FALLBACK_POLL_MS = 3_000;

/**
 * Every pending `ask` across sessions, from the public API alone: a waiting session is idle, and
 * its latest events say which calls wait for a person. Re-read when the session hint stream says
 * the sessions may have changed (`useSessionHints`), so a decision made on any edge leaves the list
 * at once; polled only while that stream is down.
 */
export function usePendingApprovals() {
  const { client } = useApi();
  const live = useSessionHintsLive();
  return useQuery({
    queryKey: ["approvals"],
    refetchInterval: live ? false : FALLBACK_POLL_MS,
    queryFn: async ({ signal }): Promise<PendingApproval[]> => {
      // A running session may have a subagent waiting on a person (its own asks keep it idle).
      const idle = await client.beta.sessions.list(
        { statuses: ["idle", "running"], limit: SESSIONS_CHECKED },
        { signal },
      );
      const perSession = await Promise.all(
        idle.data.map(async (session) => {
          const page = await client.beta.sessions.events.list(
            session.id,
            { order: "desc", limit: EVENTS_READ },
            { signal },
          );
          const events: SessionEvent[] = [...page.data].reverse();
          const subagents = threadAsks(events).filter((call) => call.needs === "approval");
          return [...pendingApprovals(runState(events)), ...subagents].map(
            (call): PendingApproval => ({
              ...call,
              sessionId: session.id,
              sessionTitle: session.title,
              agentName: session.agent.name,
              askedAt: events.find((event) => event.id === call.id)?.processed_at ?? null,
            }),
          );
        }),
      );
      return perSession.flat();
    },
  });
}
