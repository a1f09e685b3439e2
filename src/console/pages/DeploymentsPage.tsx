import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import { deploymentState, scheduleSummary } from "../projection/deployments.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const PAGE_SIZE = 50;

/** The workspace's deployments with their schedule, next instant and state (archived ones on request). */
export function DeploymentsPage() {
  const { client } = useApi();
  const pages = useCursorPages();
  const [includeArchived, setIncludeArchived] = useState(false);
  const deployments = useQuery({
    queryKey: ["deployments", includeArchived, pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.deployments.list(
        {
          limit: PAGE_SIZE,
          ...(includeArchived ? { include_archived: true } : {}),
          ...(pages.cursor ? { page: pages.cursor } : {}),
        },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  return (
    <section aria-labelledby="deployments-title">
      <h1 id="deployments-title">Deployments</h1>
      <p className="hint">
        Each run of a deployment, scheduled or manual, opens an ordinary session. Instants are listed before
        each deployment's jitter.
      </p>
      <div className="toolbar">
        <label className="inline">
          <input
            type="checkbox"
            checked={includeArchived}
            onChange={(event) => {
              setIncludeArchived(event.target.checked);
              pages.reset();
            }}
          />
          Include archived
        </label>
      </div>
      <Problem error={deployments.error} />
      {deployments.data?.data.length === 0 && <p>None yet.</p>}
      {deployments.data && deployments.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="deployments">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Agent</th>
                <th scope="col">Schedule</th>
                <th scope="col">Next run</th>
                <th scope="col">Last scheduled run</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {deployments.data.data.map((deployment) => {
                const schedule = scheduleSummary(deployment);
                return (
                  <tr key={deployment.id} data-testid="deployment-row" data-deployment-id={deployment.id}>
                    <td>
                      <Link to={`deployments/${encodeURIComponent(deployment.id)}`}>{deployment.name}</Link>
                      <div className="muted mono">{deployment.id}</div>
                    </td>
                    <td>
                      <Link to={`agents/${encodeURIComponent(deployment.agent.id)}`}>
                        {deployment.agent.id}
                      </Link>
                      <div className="muted">version {deployment.agent.version}</div>
                    </td>
                    <td className="mono">{schedule.label}</td>
                    <td>{formatTime(schedule.next)}</td>
                    <td>{formatTime(schedule.last)}</td>
                    <td>{deploymentState(deployment)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={deployments.data?.next} />
    </section>
  );
}
