import { useApi } from "../api/apiContext.js";
import type { Vault } from "../api/wire.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { ResourceList } from "./ResourceList.js";

/** Vaults by name and id: the API returns no secret material, so there is none to hide. */
export function VaultsPage() {
  const { client } = useApi();
  return (
    <ResourceList<Vault>
      title="Vaults"
      queryKey="vaults"
      load={async (signal) => (await client.beta.vaults.list({ limit: 100 }, { signal })).data}
      columns={[
        {
          label: "Name",
          cell: (vault) => <Link to={`vaults/${encodeURIComponent(vault.id)}`}>{vault.display_name}</Link>,
        },
        { label: "Updated", cell: (vault) => formatTime(vault.updated_at) },
      ]}
    />
  );
}
