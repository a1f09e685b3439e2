import { join } from "node:path";

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Where a session's workspace lives under the worker's workspace root. The id comes from the
 * activation, but it is a path component: anything but a plain id is refused rather than joined.
 */
export function workspaceDirectory(root: string, sessionId: string): string {
  if (!SESSION_ID.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
  return join(root, sessionId);
}
