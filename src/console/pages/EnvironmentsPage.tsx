import { useApi } from "../api/apiContext.js";
import type { Environment } from "../api/wire.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { ResourceList } from "./ResourceList.js";
import { sandboxOf } from "./sandboxOf.js";

export function EnvironmentsPage() {
  const { client } = useApi();
  return (
    <ResourceList<Environment>
      title="Environments"
      queryKey="environments"
      load={async (signal) => (await client.beta.environments.list({ limit: 100 }, { signal })).data}
      columns={[
        {
          label: "Name",
          cell: (environment) => (
            <Link to={`environments/${encodeURIComponent(environment.id)}`}>{environment.name}</Link>
          ),
        },
        { label: "Type", cell: (environment) => environment.config.type },
        { label: "Sandbox", cell: (environment) => sandboxOf(environment).join(" · ") },
        { label: "Updated", cell: (environment) => formatTime(environment.updated_at) },
      ]}
    />
  );
}
