import type { ThreadNode } from "../projection/threadTree.js";
import type { WorkflowRun } from "../projection/workflowRuns.js";
import { Link } from "../router.js";

/**
 * The session's threads, the primary at the root and each child under the thread that made it:
 * its agent, status and workflow run. Each is a link to the page showing that thread's transcript.
 */
export function ThreadTree({
  sessionId,
  roots,
  shown,
  runs,
}: {
  sessionId: string;
  roots: readonly ThreadNode[];
  /** The thread whose transcript is shown; null for the primary. */
  shown: string | null;
  runs: readonly WorkflowRun[];
}) {
  return (
    <nav className="card thread-tree" aria-labelledby="threads-title" data-testid="thread-tree">
      <h2 id="threads-title">Threads</h2>
      <ul>
        {roots.map((node) => (
          <Branch key={node.id} sessionId={sessionId} node={node} shown={shown} runs={runs} />
        ))}
      </ul>
    </nav>
  );
}

function Branch({
  sessionId,
  node,
  shown,
  runs,
}: {
  sessionId: string;
  node: ThreadNode;
  shown: string | null;
  runs: readonly WorkflowRun[];
}) {
  const primary = node.primary;
  const to = primary
    ? `sessions/${encodeURIComponent(sessionId)}`
    : `sessions/${encodeURIComponent(sessionId)}/threads/${encodeURIComponent(node.id)}`;
  const current = primary ? shown === null || shown === node.id : shown === node.id;
  const run = node.workflowRunId ? runs.find((r) => r.id === node.workflowRunId) : undefined;
  return (
    <li data-testid="thread" data-thread-id={node.id} data-status={node.status}>
      <div className="thread-line">
        <Link to={to} current={current}>
          {node.agentName}
        </Link>
        {primary && <span className="muted">primary</span>}
        <span className={`status status-${node.status}`}>{node.archived ? "archived" : node.status}</span>
        {node.workflowRunId && (
          <span className="muted" data-testid="thread-workflow">
            workflow {run?.name ?? node.workflowRunId}
          </span>
        )}
        <span className="mono muted thread-id">{node.id}</span>
      </div>
      {node.children.length > 0 && (
        <ul>
          {node.children.map((child) => (
            <Branch key={child.id} sessionId={sessionId} node={child} shown={shown} runs={runs} />
          ))}
        </ul>
      )}
    </li>
  );
}
