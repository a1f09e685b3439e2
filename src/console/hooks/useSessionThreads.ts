import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import type { SessionThread } from "../api/wire.js";

/**
 * The session's threads as `threads.list` returns them, every page. Keyed under the session, so
 * the page's re-read on the primary's `session.*` events (a thread created, a thread's status)
 * re-reads them too.
 */
export function useSessionThreads(sessionId: string) {
  const { client } = useApi();
  return useQuery({
    queryKey: ["session", sessionId, "threads"],
    queryFn: async ({ signal }) => {
      const threads: SessionThread[] = [];
      for await (const thread of client.beta.sessions.threads.list(sessionId, { limit: 100 }, { signal }))
        threads.push(thread);
      return threads;
    },
  });
}
