import { useState } from "react";
import { problemOf } from "../api/client.js";
import { type PendingApproval, usePendingApprovals } from "../hooks/usePendingApprovals.js";
import { useSessionActions } from "../hooks/useSessionActions.js";
import { prettyJson } from "../projection/contentText.js";
import { Link } from "../router.js";

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
  const [denyMessage, setDenyMessage] = useState("");
  return (
    <li className="card" data-testid="approval" data-tool-use-id={approval.id}>
      <p>
        <strong>{approval.mcpServer ? `MCP ${approval.mcpServer} · ${approval.name}` : approval.name}</strong>{" "}
        in{" "}
        <Link to={`sessions/${encodeURIComponent(approval.sessionId)}`}>
          {approval.sessionTitle || approval.sessionId}
        </Link>{" "}
        <span className="muted">({approval.agentName})</span>
      </p>
      <pre>{prettyJson(approval.input)}</pre>
      <div className="decide">
        <button
          type="button"
          disabled={confirm.isPending}
          onClick={() => confirm.mutate({ toolUseId: approval.id, allow: true })}
        >
          Allow
        </button>
        <label>
          Deny message
          <input value={denyMessage} onChange={(event) => setDenyMessage(event.target.value)} />
        </label>
        <button
          type="button"
          className="danger"
          disabled={confirm.isPending}
          onClick={() =>
            confirm.mutate({
              toolUseId: approval.id,
              allow: false,
              ...(denyMessage.trim() ? { denyMessage: denyMessage.trim() } : {}),
            })
          }
        >
          Deny
        </button>
      </div>
      {confirm.isError && (
        <p role="alert" className="problem">
          {problemOf(confirm.error)}
        </p>
      )}
    </li>
  );
}
