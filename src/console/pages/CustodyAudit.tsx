import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";

/**
 * The custody audit, newest first: which holder opened (or was refused) which credential revision
 * for which session and run, and when. Paged with the server's cursors.
 */
export function CustodyAudit(props: { credentialId?: string; sessionId?: string; headingLevel?: 1 | 2 }) {
  const { client } = useApi();
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors.at(-1);
  const filter = {
    ...(props.credentialId ? { credential_id: props.credentialId } : {}),
    ...(props.sessionId ? { session_id: props.sessionId } : {}),
    ...(cursor ? { page: cursor } : {}),
  };
  const opens = useQuery({
    queryKey: ["credential-opens", props.credentialId ?? "", props.sessionId ?? "", cursor],
    queryFn: ({ signal }) => awaken.credentialOpens(client, filter, signal),
  });
  const Heading = props.headingLevel === 1 ? "h1" : "h2";
  return (
    <section aria-labelledby="custody-title">
      <Heading id="custody-title">Custody audit</Heading>
      {opens.isError && (
        <p role="alert" className="problem">
          {problemOf(opens.error)}
        </p>
      )}
      {opens.data?.data.length === 0 && <p>No opens recorded.</p>}
      {opens.data && opens.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="custody-audit">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Outcome</th>
                <th scope="col">Holder</th>
                <th scope="col">Credential</th>
                <th scope="col">Session / run</th>
                <th scope="col">Claim</th>
              </tr>
            </thead>
            <tbody>
              {opens.data.data.map((open) => (
                <tr key={open.id}>
                  <td>{formatTime(open.created_at)}</td>
                  <td>
                    <span className="badge">{open.outcome}</span>
                    {open.reason && <div className="muted">{open.reason}</div>}
                    {open.refreshed_to !== null && (
                      <div className="muted">→ revision {open.refreshed_to}</div>
                    )}
                  </td>
                  <td>{open.holder}</td>
                  <td>
                    <Link
                      to={`vaults/${encodeURIComponent(open.vault_id)}/credentials/${encodeURIComponent(open.credential_id)}`}
                      className="mono"
                    >
                      {open.credential_id}
                    </Link>{" "}
                    <span className="muted">rev {open.revision}</span>
                    <div className="muted mono">{open.usage_key}</div>
                  </td>
                  <td>
                    {open.session_id ? (
                      <Link to={`sessions/${encodeURIComponent(open.session_id)}`} className="mono">
                        {open.session_id}
                      </Link>
                    ) : (
                      <span className="muted">operator probe</span>
                    )}
                    {open.run_id && <div className="muted mono">{open.run_id}</div>}
                  </td>
                  <td className="mono">
                    {open.owner} <span className="muted">epoch {open.epoch}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="toolbar">
        <button
          type="button"
          className="secondary"
          disabled={cursors.length <= 1}
          onClick={() => setCursors((previous) => previous.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!opens.data?.next_page}
          onClick={() => {
            const next = opens.data?.next_page;
            if (next) setCursors((previous) => [...previous, next]);
          }}
        >
          Older
        </button>
      </div>
    </section>
  );
}
