import { problemOf } from "../api/client.js";
import { type PendingApproval, usePendingApprovals } from "../hooks/usePendingApprovals.js";
import { useSessionActions } from "../hooks/useSessionActions.js";
import { prettyJson } from "../projection/contentText.js";
import { Link } from "../router.js";
import { DecideButtons } from "./DecideButtons.js";

/** Every pending ask across sessions, each answerable here with the same confirmation event. */
export function ApprovalsPage() {
  const approvals = usePendingApprovals();
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      {approvals.isError && (
        <p role="alert" className="problem">
          {problemOf(approvals.error)}
        </p>
      )}
      {approvals.data?.length === 0 && <p>Nothing waits for a decision.</p>}
      <ul className="approvals">
        {approvals.data?.map((approval) => (
          <ApprovalItem key={`${approval.sessionId}/${approval.id}`} approval={approval} />
        ))}
      </ul>
    </section>
  );
}

function ApprovalItem({ approval }: { approval: PendingApproval }) {
  const { confirm } = useSessionActions(approval.sessionId);
  return (
    <li className="card" data-testid="approval" data-tool-use-id={approval.id}>
      <p>
        <strong>{approval.mcpServer ? `MCP ${approval.mcpServer} · ${approval.name}` : approval.name}</strong>{" "}
        in{" "}
        <Link to={`sessions/${encodeURIComponent(approval.sessionId)}`}>
          {approval.sessionTitle || approval.sessionId}
        </Link>{" "}
        <span className="muted">({approval.agentName})</span>
        {approval.threadId && (
          <>
            {" "}
            <span className="muted" data-testid="approval-thread">
              asked by a subagent:{" "}
              <Link
                to={`sessions/${encodeURIComponent(approval.sessionId)}/threads/${encodeURIComponent(approval.threadId)}`}
              >
                its thread
              </Link>
            </span>
          </>
        )}
      </p>
      <pre>{prettyJson(approval.input)}</pre>
      <DecideButtons
        disabled={confirm.isPending}
        onDecide={(allow, denyMessage) =>
          confirm.mutate({ toolUseId: approval.id, allow, ...(denyMessage ? { denyMessage } : {}) })
        }
      />
      {confirm.isError && (
        <p role="alert" className="problem">
          {problemOf(confirm.error)}
        </p>
      )}
    </li>
  );
}
