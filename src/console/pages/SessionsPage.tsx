import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken, type LastRun } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import type { Session } from "../api/wire.js";
import { usePendingApprovals } from "../hooks/usePendingApprovals.js";
import { useSessionHintsLive } from "../hooks/useSessionHints.js";
import {
  type ShownStatus,
  STATUS_FILTERS,
  sessionStatusView,
  wireStatusesFor,
} from "../projection/sessionStatus.js";
import { Link, useNavigation } from "../router.js";
import { formatTime } from "./formatTime.js";

const PAGE_SIZE = 20;
/** How often the list is read while the session hint stream is down. */
const FALLBACK_POLL_MS = 3_000;

/**
 * Sessions newest first, filtered by status and agent, paged with the wire's cursors; re-read when
 * the session hint stream says they changed (`useSessionHints`), polled only while it is down.
 */
export function SessionsPage() {
  const { client } = useApi();
  const { navigate } = useNavigation();
  const [status, setStatus] = useState<ShownStatus | "">("");
  const [agentId, setAgentId] = useState("");
  // The cursors of the pages before this one; the last is the current page's (undefined = first).
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [search, setSearch] = useState("");
  const [searchProblem, setSearchProblem] = useState<string | null>(null);
  const cursor = cursors.at(-1);
  const live = useSessionHintsLive();

  const agents = useQuery({
    queryKey: ["agents", "all"],
    queryFn: async ({ signal }) => (await client.beta.agents.list({ limit: 100 }, { signal })).data,
  });
  const environments = useQuery({
    queryKey: ["environments", "all"],
    queryFn: async ({ signal }) => (await client.beta.environments.list({ limit: 100 }, { signal })).data,
  });
  const sessions = useQuery({
    queryKey: ["sessions", status, agentId, cursor],
    refetchInterval: live ? false : FALLBACK_POLL_MS,
    queryFn: async ({ signal }) => {
      const statuses = wireStatusesFor(status);
      const page = await client.beta.sessions.list(
        {
          limit: PAGE_SIZE,
          ...(statuses ? { statuses } : {}),
          ...(agentId ? { agent_id: agentId } : {}),
          ...(cursor ? { page: cursor } : {}),
        },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  // How the idle ones' last runs ended (the wire says idle whether they failed or not): a query of
  // its own, so the list shows as soon as its one read answers, and the outcomes fill in after.
  const idle = (sessions.data?.data ?? []).filter((s) => s.status === "idle").map((s) => s.id);
  const outcomes = useQuery({
    queryKey: ["sessions", "outcomes", idle],
    enabled: idle.length > 0,
    queryFn: async ({ signal }) => {
      const found = (await awaken.sessionOutcomes(client, idle, signal)).data;
      return new Map(found.map((o) => [o.session_id, o.last_run]));
    },
  });
  const lastRuns = outcomes.data ?? new Map<string, LastRun | null>();
  // Under "failed", a page keeps only the failed idle sessions: it may show fewer than PAGE_SIZE.
  const rows =
    status === "failed"
      ? (sessions.data?.data ?? []).filter((s) => lastRuns.get(s.id)?.outcome === "failed")
      : (sessions.data?.data ?? []);
  const approvals = usePendingApprovals();
  const awaiting = new Set(approvals.data?.map((approval) => approval.sessionId));
  const environmentName = (id: string) => environments.data?.find((e) => e.id === id)?.name ?? id;
  const resetPages = () => setCursors([undefined]);

  const onSearch = async (event: FormEvent) => {
    event.preventDefault();
    const id = search.trim();
    if (id === "") return;
    setSearchProblem(null);
    try {
      const found = await client.beta.sessions.retrieve(id);
      navigate(`sessions/${encodeURIComponent(found.id)}`);
    } catch (error) {
      setSearchProblem(problemOf(error));
    }
  };

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      <div className="toolbar">
        <label>
          Status
          <select
            value={status}
            onChange={(event) => {
              setStatus(event.target.value as ShownStatus | "");
              resetPages();
            }}
          >
            <option value="">Any</option>
            {STATUS_FILTERS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select
            value={agentId}
            onChange={(event) => {
              setAgentId(event.target.value);
              resetPages();
            }}
          >
            <option value="">Any</option>
            {agents.data?.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
        </label>
        <search>
          <form onSubmit={onSearch} className="search">
            <label>
              Session id
              <input
                value={search}
                onChange={(event) => setSearch(event.target.value)}
                placeholder="sesn_…"
              />
            </label>
            <button type="submit">Open</button>
          </form>
        </search>
      </div>
      {searchProblem && (
        <p role="alert" className="problem">
          {searchProblem}
        </p>
      )}
      {sessions.isError && (
        <p role="alert" className="problem">
          {problemOf(sessions.error)}
        </p>
      )}
      {sessions.data && rows.length === 0 && (status !== "failed" || !outcomes.isPending) && (
        <p>No sessions match.</p>
      )}
      {sessions.data && rows.length > 0 && (
        <div className="table-wrap">
          <table className="sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Status</th>
                <th scope="col">Agent</th>
                <th scope="col">Environment</th>
                <th scope="col">Last activity</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((session) => (
                <SessionRow
                  key={session.id}
                  session={session}
                  awaitingApproval={awaiting.has(session.id)}
                  lastRun={lastRuns.get(session.id)}
                  environment={environmentName(session.environment_id)}
                />
              ))}
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
          disabled={!sessions.data?.next}
          onClick={() => sessions.data?.next && setCursors([...cursors, sessions.data.next])}
        >
          Older
        </button>
      </div>
    </section>
  );
}

function SessionRow({
  session,
  environment,
  awaitingApproval,
  lastRun,
}: {
  session: Session;
  environment: string;
  awaitingApproval: boolean;
  lastRun: LastRun | null | undefined;
}) {
  const shown = sessionStatusView(session, lastRun);
  return (
    <tr data-testid="session-row" data-session-id={session.id} data-status={shown.status}>
      <td>
        <Link to={`sessions/${encodeURIComponent(session.id)}`}>{session.title || session.id}</Link>
        {session.title && <div className="muted mono">{session.id}</div>}
      </td>
      <td data-label="Status">
        <span className={`status status-${shown.status}`}>{shown.status}</span>
        {awaitingApproval && <span className="badge awaiting">awaiting approval</span>}
        {shown.error && (
          <div className="failure-line" data-testid="session-error">
            {shown.error}
          </div>
        )}
      </td>
      <td data-label="Agent">
        {session.agent.name} <span className="muted">v{session.agent.version}</span>
      </td>
      <td data-label="Environment">{environment}</td>
      <td data-label="Last activity">
        <time dateTime={session.updated_at}>{formatTime(session.updated_at)}</time>
      </td>
    </tr>
  );
}
