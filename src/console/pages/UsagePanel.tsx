import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken, type WorkspaceUsage } from "../api/awaken.js";

const REFRESH_MS = 30_000;

/** "3 of 8" against a limit, or the figure alone without one. */
function against(value: string | number, limit: string | number | null | undefined): string {
  return limit === null || limit === undefined ? String(value) : `${value} of ${limit}`;
}

const money = (m: { amount: string }) => `$${Number(m.amount).toFixed(2)}`;

/**
 * The workspace's usage per day (from its committed usage facts) and now, each against the quota
 * the operator set, if any, and the days' usage per user profile. An admin read: another key sees the rest of the overview without it.
 */
export function UsagePanel() {
  const { client } = useApi();
  const usage = useQuery({
    queryKey: ["usage"],
    refetchInterval: REFRESH_MS,
    retry: false,
    queryFn: ({ signal }) => awaken.usage(client, signal),
  });
  return (
    <section className="card" aria-labelledby="usage-title" data-testid="usage">
      <h2 id="usage-title">Usage and quotas</h2>
      {usage.isError && <p className="muted">Only admin keys see the workspace's usage.</p>}
      {usage.data && <UsageFigures usage={usage.data} />}
    </section>
  );
}

function UsageFigures({ usage }: { usage: WorkspaceUsage }) {
  const { now, limits } = usage;
  return (
    <>
      <p className="figure" data-testid="usage-now">
        Runs now <strong>{against(now.active_runs, limits?.concurrent_runs)}</strong> · sessions this hour{" "}
        <strong>{against(now.sessions_last_hour, limits?.sessions_per_hour)}</strong> · tokens (24 h){" "}
        <strong>
          {against(now.tokens_last_24h.toLocaleString(), limits?.tokens_per_day?.toLocaleString())}
        </strong>{" "}
        · list cost (24 h){" "}
        <strong>
          {against(
            money(now.list_cost_last_24h),
            limits?.list_cost_per_day ? money(limits.list_cost_per_day) : null,
          )}
        </strong>
      </p>
      {limits === null && <p className="muted">No quotas are set for this workspace.</p>}
      <div className="table-wrap">
        <table data-testid="usage-days">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Tokens</th>
              <th scope="col">List cost</th>
            </tr>
          </thead>
          <tbody>
            {usage.days.map((day) => (
              <tr key={day.date}>
                <td data-label="Day (UTC)">{day.date}</td>
                <td data-label="Tokens">{day.tokens.toLocaleString()}</td>
                <td data-label="List cost">{money(day.list_cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ProfileUsage rows={usage.user_profiles ?? []} days={usage.days.length} />
    </>
  );
}

/** The days' usage per user profile (the end customers sessions are attributed to). */
function ProfileUsage({ rows, days }: { rows: NonNullable<WorkspaceUsage["user_profiles"]>; days: number }) {
  if (rows.length === 0)
    return (
      <p className="muted" data-testid="usage-profiles-empty">
        No usage is attributed to a user profile in these {days} days.
      </p>
    );
  return (
    <div className="table-wrap">
      <table data-testid="usage-profiles">
        <caption>Per user profile, last {days} days</caption>
        <thead>
          <tr>
            <th scope="col">User profile</th>
            <th scope="col">Tokens</th>
            <th scope="col">List cost</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.user_profile_id}>
              <td data-label="User profile">
                <code>{row.user_profile_id}</code>
              </td>
              <td data-label="Tokens">{row.tokens.toLocaleString()}</td>
              <td data-label="List cost">{money(row.list_cost)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
