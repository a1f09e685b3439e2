import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import type { SessionEvent } from "../api/wire.js";
import { type AwaitedCall, pendingApprovals, runState } from "../projection/runState.js";

export interface PendingApproval extends AwaitedCall {
  sessionId: string;
  sessionTitle: string | null;
  agentName: string;
}

/** How many idle sessions, newest first, are checked for asks, and how far back each is read. */
const SESSIONS_CHECKED = 50;
const EVENTS_READ = 200;

/**
 * Every pending `ask` across sessions, from the public API alone: a waiting session is idle, and
 * its latest events say which calls wait for a person. Polled, so a decision made on any edge
 * leaves the list on the next read.
 */
export function usePendingApprovals() {
  const { client } = useApi();
  return useQuery({
    queryKey: ["approvals"],
    refetchInterval: 3_000,
    queryFn: async ({ signal }): Promise<PendingApproval[]> => {
      const idle = await client.beta.sessions.list(
        { statuses: ["idle"], limit: SESSIONS_CHECKED },
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
          return pendingApprovals(runState(events)).map(
            (call): PendingApproval => ({
              ...call,
              sessionId: session.id,
              sessionTitle: session.title,
              agentName: session.agent.name,
            }),
          );
        }),
      );
      return perSession.flat();
    },
  });
}
