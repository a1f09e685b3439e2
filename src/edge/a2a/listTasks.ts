import { type ListTasksRequest, type ListTasksResponse, TaskState } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { A2aPorts } from "./a2aPorts.js";
import { STATE } from "./a2aWire.js";
import { projectTasks, type TurnTask, taskOf } from "./taskProjection.js";

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** Where a page ends: the session list's cursor before the session it stopped in, and how many of that session's tasks it took. */
interface PageToken {
  cursor: string | null;
  skip: number;
}

/**
 * `ListTasks`: the agent's tasks, newest session first and each session's newest task first (one
 * context when `contextId` names it). Pages walk the session list one session at a time, so a
 * token stays valid while new sessions and tasks are added.
 */
export async function listTasks(
  ports: A2aPorts,
  scope: { workspaceId: string; agentId: string },
  context: SessionRecord | null,
  params: ListTasksRequest,
): Promise<ListTasksResponse> {
  const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_PAGE_SIZE}.`);
  }
  const token = parseToken(params.pageToken);
  const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : Number.NaN;
  const keep = (task: TurnTask) =>
    (params.status === TaskState.TASK_STATE_UNSPECIFIED || STATE[task.tracker.state] === params.status) &&
    (Number.isNaN(after) || task.tracker.updatedAt > after);
  const options = { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts ?? false };

  const out: TurnTask[] = [];
  let cursor = token.cursor;
  let skip = token.skip;
  let next: PageToken | null = null;
  for (;;) {
    let session: SessionRecord | undefined;
    let following: string | null = null;
    if (context) {
      session = cursor === null ? context : undefined;
      following = "end";
    } else {
      const page = await ports.sessions(scope.workspaceId, scope.agentId, 1, cursor);
      session = page.sessions[0];
      following = page.nextCursor;
    }
    if (!session) break;
    const tasks = projectTasks(session.id, await ports.history(session.threadId, 0))
      .reverse()
      .filter(keep);
    const room = pageSize - out.length;
    const taken = tasks.slice(skip, skip + room);
    out.push(...taken);
    if (skip + taken.length < tasks.length) {
      next = { cursor, skip: skip + taken.length };
      break;
    }
    if (following === null || following === "end") break;
    cursor = following;
    skip = 0;
    if (out.length >= pageSize) {
      next = { cursor, skip: 0 };
      break;
    }
  }
  return {
    tasks: out.map((t) => taskOf(t, options)),
    nextPageToken: next ? Buffer.from(JSON.stringify(next)).toString("base64url") : "",
    pageSize,
    totalSize: out.length,
  };
}

function parseToken(token: string): PageToken {
  if (token === "") return { cursor: null, skip: 0 };
  try {
    const value = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as PageToken;
    if (
      (value.cursor === null || typeof value.cursor === "string") &&
      Number.isInteger(value.skip) &&
      value.skip >= 0
    ) {
      return value;
    }
  } catch {
    // falls through to the refusal
  }
  throw new RequestMalformedError("pageToken is not a token this server gave; start again without one.");
}
