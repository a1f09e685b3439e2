import { type AGUIEvent, EventType, type Message } from "@ag-ui/core";

/**
 * The MESSAGES_SNAPSHOT events that leave the client holding the thread's messages in order.
 * The official client merges a snapshot into its list: messages it holds keep their places (with
 * the snapshot's content), held messages the snapshot lacks are dropped, the rest are appended. A
 * client that is behind the thread (another client wrote meanwhile) and sends a new message would
 * so get the missing history appended after that message. It is then first sent the history
 * before this run's input, which takes its new message out and puts the history in, and then the
 * whole list, which appends the new message last; failing that, an empty snapshot clears its list.
 */
export function snapshotEvents(
  heldIds: readonly string[],
  before: readonly Message[],
  all: readonly Message[],
): AGUIEvent[] {
  const snapshot = (messages: readonly Message[]): AGUIEvent => ({
    type: EventType.MESSAGES_SNAPSHOT,
    messages: [...messages],
  });
  const wanted = all.map((m) => m.id);
  if (sameOrder(merged(heldIds, all), wanted)) return [snapshot(all)];
  if (sameOrder(merged(merged(heldIds, before), all), wanted)) return [snapshot(before), snapshot(all)];
  return [snapshot([]), snapshot(all)];
}

/** The ids the client holds after merging `snapshot` into a list holding `held`. */
function merged(held: readonly string[], snapshot: readonly Message[]): string[] {
  const inSnapshot = new Set(snapshot.map((m) => m.id));
  const kept = held.filter((id) => inSnapshot.has(id));
  const keptIds = new Set(kept);
  return [...kept, ...snapshot.map((m) => m.id).filter((id) => !keptIds.has(id))];
}

function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
