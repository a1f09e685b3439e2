import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { prettyJson } from "../projection/contentText.js";
import { Link } from "../router.js";
import { CustodyAudit } from "./CustodyAudit.js";
import { formatTime } from "./formatTime.js";

/** One credential: its current head, every revision (secret-free), and who opened it when. */
export function CredentialPage({ vaultId, credentialId }: { vaultId: string; credentialId: string }) {
  const { client } = useApi();
  const credential = useQuery({
    queryKey: ["credential", vaultId, credentialId],
    queryFn: ({ signal }) =>
      client.beta.vaults.credentials.retrieve(credentialId, { vault_id: vaultId }, { signal }),
  });
  const revisions = useQuery({
    queryKey: ["credential-revisions", vaultId, credentialId],
    queryFn: ({ signal }) => awaken.credentialRevisions(client, vaultId, credentialId, signal),
  });
  return (
    <>
      <p>
        <Link to={`vaults/${encodeURIComponent(vaultId)}`}>← Credentials in {vaultId}</Link>
      </p>
      <section aria-labelledby="credential-title">
        <h1 id="credential-title">
          {credential.data?.display_name ?? "Credential"} <span className="mono muted">{credentialId}</span>
        </h1>
        {credential.isError && (
          <p role="alert" className="problem">
            {problemOf(credential.error)}
          </p>
        )}
        {credential.data && (
          <dl>
            <dt>Kind</dt>
            <dd>{credential.data.auth.type}</dd>
            <dt>Updated</dt>
            <dd>{formatTime(credential.data.updated_at)}</dd>
            <dt>Archived</dt>
            <dd>{credential.data.archived_at ? formatTime(credential.data.archived_at) : "no"}</dd>
          </dl>
        )}
      </section>
      <section aria-labelledby="revisions-title">
        <h2 id="revisions-title">Revisions</h2>
        <p className="hint">Each rotation appends a revision; sealed fields are named, never shown.</p>
        {revisions.isError && (
          <p role="alert" className="problem">
            {problemOf(revisions.error)}
          </p>
        )}
        {revisions.data && (
          <div className="table-wrap">
            <table data-testid="credential-revisions">
              <thead>
                <tr>
                  <th scope="col">Revision</th>
                  <th scope="col">Created</th>
                  <th scope="col">Sealed fields</th>
                  <th scope="col">Auth (secret-free)</th>
                </tr>
              </thead>
              <tbody>
                {revisions.data.data.map((revision) => (
                  <tr key={revision.revision}>
                    <td>{revision.revision}</td>
                    <td>{formatTime(revision.created_at)}</td>
                    <td className="mono">{revision.secret_fields.join(", ") || "none"}</td>
                    <td>
                      <pre>{prettyJson(revision.auth)}</pre>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <CustodyAudit credentialId={credentialId} />
    </>
  );
}
