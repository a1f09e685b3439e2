import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { useNameBook } from "../hooks/useNameBook.js";
import { AUDIT_RESOURCE_TYPES, actorName } from "../projection/resourceNames.js";
import { formatTime } from "./formatTime.js";

/**
 * The admin audit (admin keys): who changed what in the workspace, newest first, filtered by
 * resource type and paged with the server's cursors. Ids are shown with their names where the
 * Console can resolve them; digests, never the values.
 */
export function AuditPage() {
  const { client } = useApi();
  const names = useNameBook();
  const [resourceType, setResourceType] = useState("");
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors.at(-1);
  const audit = useQuery({
    queryKey: ["audit", resourceType, cursor],
    queryFn: ({ signal }) =>
      awaken.audit(
        client,
        { ...(resourceType ? { resource_type: resourceType } : {}), ...(cursor ? { page: cursor } : {}) },
        signal,
      ),
  });
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Admin audit</h1>
      <div className="toolbar">
        <label>
          Resource type
          <select
            value={resourceType}
            onChange={(event) => {
              setResourceType(event.target.value);
              setCursors([undefined]);
            }}
          >
            <option value="">Any</option>
            {AUDIT_RESOURCE_TYPES.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
      </div>
      {audit.isError && (
        <p role="alert" className="problem">
          {problemOf(audit.error)}
        </p>
      )}
      {audit.data?.data.length === 0 && <p>No changes recorded.</p>}
      {audit.data && audit.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="audit">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Resource</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.data.map((entry) => {
                const name = names.get(entry.resource_id);
                return (
                  <tr key={entry.id} data-testid="audit-entry" data-resource-type={entry.resource_type}>
                    <td data-label="When">
                      <time dateTime={entry.created_at}>{formatTime(entry.created_at)}</time>
                    </td>
                    <td className="mono" data-label="Who">
                      {actorName(entry.actor, names)}
                    </td>
                    <td data-label="Action">
                      {entry.action}
                      {entry.revision !== null && <span className="muted"> r{entry.revision}</span>}
                    </td>
                    <td data-label="Resource">
                      <span className="muted">{entry.resource_type}</span> {name ?? ""}
                      <div className="mono muted">{entry.resource_id}</div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <div className="pager">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          disabled={!audit.data?.next_page}
          onClick={() => audit.data?.next_page && setCursors([...cursors, audit.data.next_page])}
        >
          Older
        </button>
      </div>
    </section>
  );
}
