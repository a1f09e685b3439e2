import { useApi } from "../api/apiContext.js";
import type { Credential } from "../api/wire.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { ResourceList } from "./ResourceList.js";

/** Where a credential is used, from its secret-free `auth` (the API never returns the material). */
function usedFor(credential: Credential): string {
  const auth = credential.auth as { type: string; mcp_server_url?: string; secret_name?: string };
  return auth.mcp_server_url ?? auth.secret_name ?? "";
}

export function VaultPage({ vaultId }: { vaultId: string }) {
  const { client } = useApi();
  return (
    <>
      <p>
        <Link to="vaults">← Vaults</Link>
      </p>
      <ResourceList<Credential>
        title={`Credentials in ${vaultId}`}
        queryKey={`vault-${vaultId}`}
        load={async (signal) =>
          (await client.beta.vaults.credentials.list(vaultId, { limit: 100 }, { signal })).data
        }
        columns={[
          {
            label: "Name",
            cell: (credential) => (
              <Link
                to={`vaults/${encodeURIComponent(vaultId)}/credentials/${encodeURIComponent(credential.id)}`}
              >
                {credential.display_name ?? "Revisions and opens"}
              </Link>
            ),
          },
          { label: "Kind", cell: (credential) => credential.auth.type },
          { label: "For", cell: (credential) => <span className="mono">{usedFor(credential)}</span> },
          { label: "Updated", cell: (credential) => formatTime(credential.updated_at) },
        ]}
      />
    </>
  );
}
