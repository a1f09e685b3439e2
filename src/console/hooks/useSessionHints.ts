import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";

const RECONNECT_MS = 2_000;

/** What a hint re-reads: the sessions list (every filter and page) and the pending approvals. */
const HINTED_QUERIES = [["sessions"], ["approvals"]] as const;

/** Whether the hint stream is connected now (while it is not, the lists it drives are polled instead). */
let connected = false;
const listeners = new Set<() => void>();
function setConnected(next: boolean): void {
  if (connected === next) return;
  connected = next;
  for (const listener of listeners) listener();
}

export function useSessionHintsLive(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => connected,
  );
}

/**
 * Keeps the sessions list and the pending approvals fresh from the server's hint stream
 * (`/v1/awaken/sessions/stream`): each hint (the first as it opens, then whenever a session is
 * created, commits, or is archived or deleted, on any edge or replica) re-reads whichever of them
 * are on screen through the public API. Mounted once per tab, by the signed-in layout.
 */
export function useSessionHints(): void {
  const { client } = useApi();
  const queries = useQueryClient();
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    void (async () => {
      while (!signal.aborted) {
        try {
          const stream = await awaken.sessionHints(client, signal);
          setConnected(true);
          for await (const hint of stream) {
            if (hint.type !== "sessions.changed") continue;
            for (const queryKey of HINTED_QUERIES)
              void queries.invalidateQueries({ queryKey: [...queryKey] });
          }
        } catch {
          // Shown nowhere: the lists fall back to polling while the stream is down.
        }
        setConnected(false);
        if (signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    })();
    return () => controller.abort();
  }, [client, queries]);
}
