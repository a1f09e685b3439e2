/**
 * The session budget as a run sees it: the cap in force and whether the committed list cost has
 * reached it. Decided from committed facts only (the budget as of the claim, then every committed
 * change to it), so any worker resuming the run decides the same.
 */

import type { SessionMeter } from "../coordinator/facts.js";
import type { CommittedTypedFact } from "../coordinator/factVocabulary.js";
import type { Activation } from "../coordinator/ports.js";
import type { JsonObject, JsonValue } from "../kernel/json.js";
import { wholeCents } from "../kernel/listPrices.js";

/** The budget in force: the last committed change to it, else the session's as of the claim. */
export function budgetInForce(
  activation: Pick<Activation, "budget">,
  facts: readonly CommittedTypedFact[],
): JsonObject | null {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i]!;
    if (fact.kind === "session_updated" && "budget" in fact.changes) return asObject(fact.changes.budget);
  }
  return activation.budget ?? null;
}

/** The cap of a budget (`max_list_cost.amount`, whole US cents); null when it names none. */
export function capOf(budget: JsonObject): bigint | null {
  const raw = asObject(budget.max_list_cost)?.amount;
  return typeof raw === "string" && /^(0|[1-9][0-9]*)$/.test(raw) ? BigInt(raw) : null;
}

/**
 * Whether no model request may start: the list cost has reached the cap, or a request already ran
 * on a model without a list price (the budget cannot measure the session any more).
 */
export function budgetReached(budget: JsonObject | null, meter: SessionMeter): boolean {
  if (budget === null) return false;
  const cap = capOf(budget);
  if (cap === null) return false;
  if (meter.listCost === null) return true;
  return wholeCents(BigInt(meter.listCost)) >= cap;
}

function asObject(value: JsonValue | undefined): JsonObject | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : null;
}
