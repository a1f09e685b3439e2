import type { Session } from "../api/wire.js";
import { budgetView, formatCents, formatSeconds } from "../projection/budget.js";

/** What the session spent and for how long it ran, against its budget when it has one. */
export function BudgetPanel({ session }: { session: Session }) {
  const budget = budgetView(session);
  const cost = session.usage.list_cost;
  return (
    <div className="card" data-testid="budget">
      <h2>Budget and usage</h2>
      <dl>
        <dt>Budget</dt>
        <dd data-testid="budget-limit">
          {budget ? `${formatCents(budget.limitCents, budget.currency)} limit` : "none"}
        </dd>
        <dt>Spent (list price)</dt>
        <dd data-testid="budget-spent">
          {cost
            ? formatCents(Number(cost.amount), cost.currency)
            : cost === null
              ? "not measurable"
              : "nothing yet"}
          {budget?.reached && <span className="problem"> — budget reached</span>}
        </dd>
        {budget?.fraction != null && (
          <>
            <dt>Of the budget</dt>
            <dd>
              <meter min={0} max={1} value={budget.fraction} aria-label="Share of the budget spent" />{" "}
              {budget.fraction > 0 && budget.fraction < 0.01 ? "under 1" : Math.round(budget.fraction * 100)}%
            </dd>
          </>
        )}
        <dt>Running time</dt>
        <dd>
          {session.stats.active_seconds !== undefined ? formatSeconds(session.stats.active_seconds) : "—"}
          {session.stats.duration_seconds !== undefined &&
            ` of ${formatSeconds(session.stats.duration_seconds)} since created`}
        </dd>
      </dl>
    </div>
  );
}
