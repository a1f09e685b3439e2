import { useApi } from "../api/apiContext.js";
import type { Agent } from "../api/wire.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { ResourceList } from "./ResourceList.js";

export function AgentsPage() {
  const { client } = useApi();
  return (
    <ResourceList<Agent>
      title="Agents"
      queryKey="agents"
      load={async (signal) => (await client.beta.agents.list({ limit: 100 }, { signal })).data}
      columns={[
        {
          label: "Name",
          cell: (agent) => <Link to={`agents/${encodeURIComponent(agent.id)}`}>{agent.name}</Link>,
        },
        { label: "Version", cell: (agent) => agent.version },
        { label: "Model", cell: (agent) => <span className="mono">{agent.model.id}</span> },
        { label: "Tools", cell: (agent) => agent.tools.map((tool) => tool.type).join(", ") || "none" },
        { label: "Updated", cell: (agent) => formatTime(agent.updated_at) },
      ]}
    />
  );
}
