/**
 * A session's threads as a tree, pure: the thread list read through the API, completed by the
 * primary history's `session.thread_created` and `session.thread_status_*` events for a child the
 * list does not hold yet (it is re-read when they arrive, and then it wins).
 */
import type { SessionEvent, SessionThread } from "../api/wire.js";

export type ThreadStatus = SessionThread["status"];

export interface ThreadNode {
  id: string;
  /** The session's primary thread (the list says it has no parent). */
  primary: boolean;
  agentName: string;
  status: ThreadStatus;
  workflowRunId: string | null;
  archived: boolean;
  children: ThreadNode[];
}

const STATUS_OF_EVENT: Partial<Record<SessionEvent["type"], ThreadStatus>> = {
  "session.thread_status_running": "running",
  "session.thread_status_idle": "idle",
  "session.thread_status_rescheduled": "rescheduling",
  "session.thread_status_terminated": "terminated",
};

function agentNameOf(agent: SessionThread["agent"]): string {
  return agent.type === "advisor" ? `advisor (${agent.model})` : agent.name;
}

/** The tree's roots: the primary thread (no parent) first, then any thread whose parent is unknown. */
export function threadTree(
  threads: readonly SessionThread[],
  primaryEvents: readonly SessionEvent[],
): ThreadNode[] {
  const created = new Map<
    string,
    { agentName: string; workflowRunId: string | null; status: ThreadStatus }
  >();
  for (const event of primaryEvents) {
    if (event.type === "session.thread_created") {
      created.set(event.session_thread_id, {
        agentName: event.agent_name,
        workflowRunId: event.workflow_run_id,
        status: "idle",
      });
    } else if (event.type.startsWith("session.thread_status_")) {
      const status = STATUS_OF_EVENT[event.type];
      const entry = created.get((event as { session_thread_id: string }).session_thread_id);
      if (entry && status) entry.status = status;
    }
  }
  const nodes = new Map<string, ThreadNode>();
  const parentOf = new Map<string, string | null>();
  for (const thread of threads) {
    nodes.set(thread.id, {
      id: thread.id,
      primary: thread.parent_thread_id === null,
      agentName: agentNameOf(thread.agent),
      status: thread.status,
      workflowRunId: thread.workflow_run_id ?? created.get(thread.id)?.workflowRunId ?? null,
      archived: thread.archived_at !== null,
      children: [],
    });
    parentOf.set(thread.id, thread.parent_thread_id);
  }
  // A child the list does not hold yet hangs under the primary, whose history announced it.
  const primary = threads.find((thread) => thread.parent_thread_id === null)?.id ?? null;
  for (const [id, entry] of created) {
    if (nodes.has(id)) continue;
    nodes.set(id, { id, primary: false, ...entry, archived: false, children: [] });
    parentOf.set(id, primary);
  }
  const roots: ThreadNode[] = [];
  for (const [id, node] of nodes) {
    const parent = parentOf.get(id);
    const parentNode = parent ? nodes.get(parent) : undefined;
    if (parentNode) parentNode.children.push(node);
    else roots.push(node);
  }
  return roots.sort((a, b) => Number(b.primary) - Number(a.primary));
}

/** Every node of the tree, depth first, with its depth (the primary is 0). */
export function flattenTree(roots: readonly ThreadNode[]): { node: ThreadNode; depth: number }[] {
  const out: { node: ThreadNode; depth: number }[] = [];
  const visit = (node: ThreadNode, depth: number) => {
    out.push({ node, depth });
    for (const child of node.children) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return out;
}
