/**
 * The session page's record: committed events (history, then the stream's, deduplicated by id as
 * the SDK's tool runner does) and the live previews of messages still streaming. A preview is
 * evidence only: the committed event with the same id replaces it.
 */
import type { SessionEvent, StreamEvent } from "../api/wire.js";

export interface Preview {
  id: string;
  type: "agent.message" | "agent.thinking";
  text: string;
}

export interface LiveHistory {
  events: readonly SessionEvent[];
  ids: ReadonlySet<string>;
  previews: readonly Preview[];
}

export const EMPTY_HISTORY: LiveHistory = { events: [], ids: new Set(), previews: [] };

/** Adds committed events not seen yet, keeping their order of arrival; drops their previews. */
export function withCommitted(history: LiveHistory, incoming: readonly SessionEvent[]): LiveHistory {
  const fresh = incoming.filter((event) => !history.ids.has(event.id));
  if (fresh.length === 0) return history;
  const ids = new Set(history.ids);
  for (const event of fresh) ids.add(event.id);
  return {
    events: [...history.events, ...fresh],
    ids,
    previews: history.previews.filter((preview) => !ids.has(preview.id)),
  };
}

/** Applies one stream item: a committed event, a preview's start or a preview's text delta. */
export function withStreamEvent(history: LiveHistory, event: StreamEvent): LiveHistory {
  if (event.type === "event_start") {
    if (history.ids.has(event.event.id)) return history;
    const preview: Preview = { id: event.event.id, type: event.event.type, text: "" };
    return { ...history, previews: [...history.previews.filter((p) => p.id !== preview.id), preview] };
  }
  if (event.type === "event_delta") {
    const content = event.delta.content as { type: string; text?: string };
    const text = typeof content.text === "string" ? content.text : "";
    let found = false;
    const previews = history.previews.map((preview) => {
      if (preview.id !== event.event_id) return preview;
      found = true;
      return { ...preview, text: preview.text + text };
    });
    return found ? { ...history, previews } : history;
  }
  const next = withCommitted(history, [event]);
  // A failed or interrupted model request, or a run that stopped, closes its previews with no
  // committed event (wire: previews are evidence).
  const closes =
    (event.type === "span.model_request_end" && event.is_error === true) ||
    event.type === "user.interrupt" ||
    event.type === "session.status_idle";
  return closes ? withoutPreviews(next) : next;
}

/** A failed model request ends its previews with no committed event: they are dropped. */
export function withoutPreviews(history: LiveHistory): LiveHistory {
  return history.previews.length === 0 ? history : { ...history, previews: [] };
}
