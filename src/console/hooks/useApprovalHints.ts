import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";

const RECONNECT_MS = 2_000;

/** Whether the hint stream is connected now (while it is not, the approvals list is polled instead). */
let connected = false;
const listeners = new Set<() => void>();
function setConnected(next: boolean): void {
  if (connected === next) return;
  connected = next;
  for (const listener of listeners) listener();
}

export function useApprovalHintsLive(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => connected,
  );
}

/**
 * Keeps the pending approvals fresh from the server's hint stream (`/v1/awaken/approvals/stream`):
 * each hint (the first as it opens, then whenever an ask appears or a decision lands on any edge)
 * re-reads them through the public API. Mounted once, by the signed-in layout.
 */
export function useApprovalHints(): void {
  const { client } = useApi();
  const queries = useQueryClient();
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    void (async () => {
      while (!signal.aborted) {
        try {
          const stream = await awaken.approvalHints(client, signal);
          setConnected(true);
          for await (const hint of stream) {
            if (hint.type === "approvals.changed")
              void queries.invalidateQueries({ queryKey: ["approvals"] });
          }
        } catch {
          // Shown nowhere: the list falls back to polling while the stream is down.
        }
        setConnected(false);
        if (signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    })();
    return () => controller.abort();
  }, [client, queries]);
}
