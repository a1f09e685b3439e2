/**
 * An AG-UI interrupt stands for one tool call that waits for the user's approval. Its id is derived
 * from the call's id, so every run that reports the same waiting call reports the same interrupt,
 * and a resume entry names the call it answers without any state kept between requests.
 */
const PREFIX = "approval:";

export function interruptIdFor(callId: string): string {
  return `${PREFIX}${callId}`;
}

/** The call an interrupt id stands for, or null when the id is not one this edge issued. */
export function callIdOfInterrupt(interruptId: string): string | null {
  if (!interruptId.startsWith(PREFIX)) return null;
  const callId = interruptId.slice(PREFIX.length);
  return callId === "" ? null : callId;
}
