/**
 * A session's spend against its budget, read off the session the API returns, pure: the limit,
 * what its committed requests cost at list price, and how much of the limit that is.
 */
import type { Session } from "../api/wire.js";

export interface BudgetView {
  currency: string;
  limitCents: number;
  /** Null when the spend cannot be measured (a model without a list price ran). */
  spentCents: number | null;
  /** 0…1 (capped), or null when the spend is unknown. */
  fraction: number | null;
  reached: boolean;
}

export function budgetView(session: Pick<Session, "budget" | "usage">): BudgetView | null {
  if (!session.budget) return null;
  const limitCents = Number(session.budget.max_list_cost.amount);
  const cost = session.usage.list_cost;
  const spentCents = cost ? Number(cost.amount) : null;
  return {
    currency: session.budget.max_list_cost.currency,
    limitCents,
    spentCents,
    fraction: spentCents === null || limitCents <= 0 ? null : Math.min(1, spentCents / limitCents),
    // An unmeasurable spend stops the session as a reached budget does.
    reached: spentCents === null || spentCents >= limitCents,
  };
}

/** Whole cents as money: `2500, "USD"` → `$25.00`; another currency by its code. */
export function formatCents(cents: number, currency: string): string {
  const units = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
  return currency === "USD" ? `$${units}` : `${units} ${currency}`;
}

/** Seconds as `1 h 2 min 3 s`, leaving out the leading zero units. */
export function formatSeconds(seconds: number): string {
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return h > 0 ? `${h} h ${m} min ${s} s` : m > 0 ? `${m} min ${s} s` : `${s} s`;
}
