import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { usePendingApprovals } from "../hooks/usePendingApprovals.js";
import { approvalAges, formatDuration, slotSummary } from "../projection/overview.js";
import { Link } from "../router.js";
import { RunsChart } from "./RunsChart.js";
import { UsagePanel } from "./UsagePanel.js";

/** How often the overview is read again: its figures are per hour, its live sessions are not. */
const REFRESH_MS = 10_000;

/**
 * The Console's home: runs by outcome over the last 24 h, run latency, tokens by provider and
 * model, approvals waiting and for how long, the sessions running now, and the workers' slots.
 * Everything is read from the server's read APIs; nothing is kept here.
 */
export function OverviewPage() {
  const { client } = useApi();
  const overview = useQuery({
    queryKey: ["overview"],
    refetchInterval: REFRESH_MS,
    queryFn: ({ signal }) => awaken.overview(client, signal),
  });
  const approvals = usePendingApprovals();
  // Workers are an admin read: another key sees the rest of the page without them.
  const workers = useQuery({
    queryKey: ["workers"],
    refetchInterval: REFRESH_MS,
    retry: false,
    queryFn: ({ signal }) => awaken.workers(client, signal),
  });
  const data = overview.data;
  const waiting = approvalAges(approvals.data ?? [], Date.now());
  const slots = workers.data ? slotSummary(workers.data) : null;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      {overview.isError && (
        <p role="alert" className="problem">
          {problemOf(overview.error)}
        </p>
      )}
      {data?.truncated && (
        <p className="hint">
          Only the {data.sessions_read} newest sessions active in the last 24 h are counted.
        </p>
      )}
      <div className="panels">
        <section className="card" aria-labelledby="latency-title" data-testid="latency">
          <h2 id="latency-title">Run latency (24 h)</h2>
          <p className="figure">
            p50 <strong data-testid="latency-p50">{formatDuration(data?.run_latency_ms.p50 ?? null)}</strong>{" "}
            · p99{" "}
            <strong data-testid="latency-p99">{formatDuration(data?.run_latency_ms.p99 ?? null)}</strong>
          </p>
          <p className="muted">{data?.run_latency_ms.runs ?? 0} runs, from start to idle</p>
        </section>
        <section className="card" aria-labelledby="live-title" data-testid="live-sessions">
          <h2 id="live-title">Live sessions</h2>
          <p className="figure">
            <strong>{data?.live_sessions.length ?? 0}</strong>
            {data?.live_sessions_truncated ? "+" : ""} running
          </p>
          <ul className="plain">
            {data?.live_sessions.slice(0, 5).map((session) => (
              <li key={session.id}>
                <Link to={`sessions/${encodeURIComponent(session.id)}`}>{session.title || session.id}</Link>{" "}
                <span className="muted">{session.status}</span>
              </li>
            ))}
          </ul>
        </section>
        <section className="card" aria-labelledby="waiting-title" data-testid="approvals-waiting">
          <h2 id="waiting-title">Approvals waiting</h2>
          <p className="figure">
            <strong>{waiting.length}</strong>
            {waiting[0]?.waitedMs != null && <> · oldest {formatDuration(waiting[0].waitedMs)}</>}
          </p>
          <ul className="plain">
            {waiting.slice(0, 5).map((approval) => (
              <li key={approval.id}>
                <Link to={`sessions/${encodeURIComponent(approval.sessionId)}`}>{approval.name}</Link>{" "}
                <span className="muted">{formatDuration(approval.waitedMs)}</span>
              </li>
            ))}
          </ul>
        </section>
        <section className="card" aria-labelledby="slots-title" data-testid="worker-slots">
          <h2 id="slots-title">Workers</h2>
          {slots ? (
            <p className="figure">
              <strong>{slots.alive}</strong> of {slots.workers} alive · {slots.busy} of {slots.slots} slots
              busy
            </p>
          ) : (
            <p className="muted">{workers.isError ? "Only admin keys see the workers." : "…"}</p>
          )}
        </section>
      </div>
      <section className="card" aria-labelledby="runs-title">
        <h2 id="runs-title">Runs by outcome, per hour (24 h)</h2>
        {data && <RunsChart hours={data.runs_by_hour} />}
      </section>
      <UsagePanel />
      <section className="card" aria-labelledby="tokens-title">
        <h2 id="tokens-title">Tokens by provider and model (24 h)</h2>
        {data?.tokens.length === 0 && <p>No model requests.</p>}
        {data && data.tokens.length > 0 && (
          <div className="table-wrap">
            <table data-testid="tokens">
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Model</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Input</th>
                  <th scope="col">Output</th>
                  <th scope="col">Cache read</th>
                </tr>
              </thead>
              <tbody>
                {data.tokens.map((row) => (
                  <tr key={`${row.provider}/${row.model}`}>
                    <td data-label="Provider">{row.provider}</td>
                    <td className="mono" data-label="Model">
                      {row.model}
                    </td>
                    <td data-label="Requests">{row.requests}</td>
                    <td data-label="Input">{row.input_tokens.toLocaleString()}</td>
                    <td data-label="Output">{row.output_tokens.toLocaleString()}</td>
                    <td data-label="Cache read">{row.cache_read_input_tokens.toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </section>
  );
}
