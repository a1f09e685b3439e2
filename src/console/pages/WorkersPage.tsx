import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken, type WorkerRosterEntry } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";

/** Which workers are alive and which of the workspace's runs they hold; re-read every few seconds. */
export function WorkersPage() {
  const { client } = useApi();
  const roster = useQuery({
    queryKey: ["workers"],
    refetchInterval: 5_000,
    queryFn: ({ signal }) => awaken.workers(client, signal),
  });
  return (
    <section aria-labelledby="workers-title">
      <h1 id="workers-title">Workers</h1>
      {roster.isError && (
        <p role="alert" className="problem">
          {problemOf(roster.error)}
        </p>
      )}
      {roster.data?.truncated && <p className="hint">Only the most recent claims are shown.</p>}
      {roster.data?.workers.length === 0 && <p>No worker holds a run of this workspace.</p>}
      <ul className="approvals">
        {roster.data?.workers.map((worker) => (
          <WorkerCard key={worker.id} worker={worker} />
        ))}
      </ul>
      {roster.data && roster.data.self_hosted.length > 0 && (
        <section aria-labelledby="self-hosted-title">
          <h2 id="self-hosted-title">Self-hosted environments' workers</h2>
          <div className="table-wrap">
            <table data-testid="self-hosted-workers">
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col">Environment</th>
                  <th scope="col">State</th>
                  <th scope="col">Last poll</th>
                  <th scope="col">Holds</th>
                </tr>
              </thead>
              <tbody>
                {roster.data.self_hosted.map((poller) => (
                  <tr key={`${poller.environment_id}/${poller.worker_id}`}>
                    <td className="mono">{poller.worker_id}</td>
                    <td className="mono">{poller.environment_id}</td>
                    <td>{poller.alive ? "alive" : "not seen lately"}</td>
                    <td>{formatTime(poller.last_polled_at)}</td>
                    <td>
                      {poller.work.length === 0
                        ? "nothing"
                        : poller.work.map((work) => (
                            <div key={work.work_id}>
                              <Link to={`sessions/${encodeURIComponent(work.session_id)}`} className="mono">
                                {work.session_id}
                              </Link>{" "}
                              <span className="muted">{work.state}</span>
                            </div>
                          ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </section>
  );
}

function WorkerCard({ worker }: { worker: WorkerRosterEntry }) {
  const held = worker.claims.filter((claim) => !claim.lapsed).length;
  return (
    <li className="card" data-testid="worker" data-worker-id={worker.id}>
      <p>
        <strong className="mono">{worker.id}</strong>{" "}
        <span className="badge">{worker.kind === "in_process" ? "in-process" : "remote"}</span>{" "}
        <span className="badge">{worker.alive ? "alive" : "not seen lately"}</span>
        {worker.this_replica && <span className="muted"> · this replica</span>}
      </p>
      <p className="muted">
        {worker.slots !== null ? `${held} of ${worker.slots} slots busy` : `${held} run(s) held`} · last seen{" "}
        {formatTime(worker.last_seen_at)}
      </p>
      {worker.claims.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Run</th>
                <th scope="col">Slot · epoch</th>
                <th scope="col">Lease until</th>
              </tr>
            </thead>
            <tbody>
              {worker.claims.map((claim) => (
                <tr key={claim.run_id}>
                  <td>
                    <Link to={`sessions/${encodeURIComponent(claim.session_id)}`} className="mono">
                      {claim.session_id}
                    </Link>
                  </td>
                  <td className="mono">{claim.run_id}</td>
                  <td>
                    {claim.slot} · {claim.epoch}
                  </td>
                  <td>{claim.lapsed ? "lapsed" : formatTime(claim.lease_expires_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </li>
  );
}
