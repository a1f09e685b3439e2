import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import { type ApiKey, awaken } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { useNameBook } from "../hooks/useNameBook.js";
import { formatTime } from "./formatTime.js";

/**
 * The workspace's API keys (admin keys): role, label, the agents a key is confined to (by name),
 * when made and revoked. A key's secret is shown only once, to whoever creates it: the list never
 * carries it. Revoking asks to confirm in place; the server refuses the key the Console signs with.
 */
export function ApiKeysPage() {
  const { client } = useApi();
  const names = useNameBook();
  const keys = useQuery({
    queryKey: ["api-keys"],
    queryFn: ({ signal }) => awaken.apiKeys(client, undefined, signal),
  });
  return (
    <section aria-labelledby="api-keys-title">
      <h1 id="api-keys-title">API keys</h1>
      <p className="hint">
        Keys are created with `awaken api-keys create`; the secret is shown then, never here.
      </p>
      {keys.isError && (
        <p role="alert" className="problem">
          {problemOf(keys.error)}
        </p>
      )}
      {keys.data && keys.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="api-keys">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Role</th>
                <th scope="col">Agents</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((key) => (
                <ApiKeyRow key={key.id} apiKey={key} agentName={(id) => names.get(id) ?? id} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ApiKeyRow({ apiKey, agentName }: { apiKey: ApiKey; agentName: (id: string) => string }) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const revoke = useMutation({
    mutationFn: () => awaken.revokeApiKey(client, apiKey.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["api-keys"] }),
    onSettled: () => setConfirming(false),
  });
  return (
    <tr data-testid="api-key" data-key-id={apiKey.id}>
      <td>
        {apiKey.label ?? <span className="muted">no label</span>}
        <div className="mono muted">{apiKey.id}</div>
      </td>
      <td data-label="Role">{apiKey.role}</td>
      <td data-label="Agents">
        {apiKey.agent_ids === null ? "all" : apiKey.agent_ids.map(agentName).join(", ") || "none"}
      </td>
      <td data-label="Created">{formatTime(apiKey.created_at)}</td>
      <td>
        {apiKey.revoked_at ? (
          <span className="muted">revoked {formatTime(apiKey.revoked_at)}</span>
        ) : confirming ? (
          <div className="decide">
            <span>Revoke this key? Clients using it stop working.</span>
            <button
              type="button"
              className="danger"
              onClick={() => revoke.mutate()}
              disabled={revoke.isPending}
            >
              Confirm revoke
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" className="secondary" onClick={() => setConfirming(true)}>
            Revoke
          </button>
        )}
        {revoke.isError && (
          <p role="alert" className="problem">
            {problemOf(revoke.error)}
          </p>
        )}
      </td>
    </tr>
  );
}
