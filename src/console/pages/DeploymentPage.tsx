import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { deploymentState, runRow, scheduleSummary } from "../projection/deployments.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const PAGE_SIZE = 50;

/** One deployment: its schedule and upcoming instants, and its runs newest first with their sessions. */
export function DeploymentPage({ deploymentId }: { deploymentId: string }) {
  const { client } = useApi();
  const pages = useCursorPages();
  const deployment = useQuery({
    queryKey: ["deployment", deploymentId],
    queryFn: ({ signal }) => client.beta.deployments.retrieve(deploymentId, {}, { signal }),
  });
  const runs = useQuery({
    queryKey: ["deployment-runs", deploymentId, pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.deploymentRuns.list(
        { deployment_id: deploymentId, limit: PAGE_SIZE, ...(pages.cursor ? { page: pages.cursor } : {}) },
        { signal },
      );
      return { data: page.data.map(runRow), next: page.next_page ?? null };
    },
  });
  const d = deployment.data;
  const schedule = d ? scheduleSummary(d) : null;
  return (
    <section aria-labelledby="deployment-title">
      <p>
        <Link to="deployments">Deployments</Link>
      </p>
      <h1 id="deployment-title">{d?.name ?? deploymentId}</h1>
      <Problem error={deployment.error} />
      {d && schedule && (
        <dl data-testid="deployment-facts">
          <dt>Id</dt>
          <dd className="mono">{d.id}</dd>
          <dt>State</dt>
          <dd>{deploymentState(d)}</dd>
          <dt>Agent</dt>
          <dd>
            <Link to={`agents/${encodeURIComponent(d.agent.id)}`}>{d.agent.id}</Link> version{" "}
            {d.agent.version}
          </dd>
          <dt>Environment</dt>
          <dd className="mono">{d.environment_id}</dd>
          <dt>Schedule</dt>
          <dd className="mono">{schedule.label}</dd>
          <dt>Upcoming</dt>
          <dd>
            {(d.schedule?.upcoming_runs_at ?? []).length === 0
              ? "—"
              : (d.schedule?.upcoming_runs_at ?? []).map((at) => formatTime(at)).join(", ")}
          </dd>
          <dt>Last scheduled run</dt>
          <dd>{formatTime(schedule.last)}</dd>
        </dl>
      )}
      <h2>Runs</h2>
      <Problem error={runs.error} />
      {runs.data?.data.length === 0 && <p>No runs yet.</p>}
      {runs.data && runs.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="deployment-runs">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Trigger</th>
                <th scope="col">Scheduled for</th>
                <th scope="col">Session</th>
                <th scope="col">Recorded</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.data.map((run) => (
                <tr key={run.id} data-testid="deployment-run-row" data-run-id={run.id}>
                  <td className="mono">{run.id}</td>
                  <td>{run.trigger}</td>
                  <td>{formatTime(run.scheduledAt)}</td>
                  <td>
                    {run.outcome.kind === "session" ? (
                      <Link to={`sessions/${encodeURIComponent(run.outcome.sessionId)}`}>
                        {run.outcome.sessionId}
                      </Link>
                    ) : (
                      <span className="problem">
                        {run.outcome.type}: {run.outcome.message}
                      </span>
                    )}
                  </td>
                  <td>{formatTime(run.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={runs.data?.next} />
    </section>
  );
}
