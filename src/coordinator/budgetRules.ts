import { AwakenError, type ErrorCode } from "../kernel/errors.js";
import { listPriceOf, wholeCents } from "../kernel/listPrices.js";
import type { SessionRecord } from "./ports.js";

/**
 * What a session budget may be set to. A budget is a hard cap on the session's list cost, so every
 * model the session can run must have a list price, and a change may never leave the cap at or
 * below what was already spent (the session would be stopped by the change itself).
 */

type BudgetRejection = Extract<
  ErrorCode,
  "budget_create_only" | "budget_not_raised" | "model_not_budgetable"
>;

function rejected(reason: BudgetRejection, message: string): AwakenError {
  return new AwakenError(reason, message, { details: { error_code: reason } });
}

/** The cap in whole US cents of a budget the edge validated (`{type:"limit", max_list_cost}`). */
function capOf(budget: unknown): bigint {
  const amount = (budget as { max_list_cost?: { amount?: unknown } } | null)?.max_list_cost?.amount;
  if (typeof amount !== "string" || !/^(0|[1-9][0-9]*)$/.test(amount)) {
    throw new AwakenError("invalid_request", "budget.max_list_cost.amount: expected minor currency units");
  }
  return BigInt(amount);
}

/** Every model the session can run has a list price (else a budget cannot measure it). */
function admitModels(agent: SessionRecord["agent"]): void {
  for (const model of runnableModels(agent.definition)) {
    if (listPriceOf(model) !== null) continue;
    throw rejected(
      "model_not_budgetable",
      `budget: model ${JSON.stringify(model)} has no public list price, so a budget cannot measure it; ` +
        "omit the budget or use models with a list price",
    );
  }
}

/**
 * The agent's model and every model its multi-agent configuration names (callable agents, advisors):
 * each `model` in it, a model id or a `{id}` object, wherever the roster puts it.
 */
function runnableModels(definition: SessionRecord["agent"]["definition"]): string[] {
  const models = [definition.model.id];
  const visit = (value: unknown, depth: number): void => {
    if (depth > 16 || typeof value !== "object" || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    for (const [key, field] of Object.entries(value)) {
      if (key === "model") {
        const id = typeof field === "string" ? field : (field as { id?: unknown } | null)?.id;
        if (typeof id === "string") models.push(id);
      } else visit(field, depth + 1);
    }
  };
  visit(definition.multiagent, 0);
  return models;
}

/** A budget given at creation: its models must all be priced. */
export function admitCreateBudget(budget: unknown | null, agent: SessionRecord["agent"]): void {
  if (budget === null) return;
  capOf(budget);
  admitModels(agent);
}

/**
 * A budget given to an update (`null` removes it). Only a session created with a budget has one to
 * replace, and a removed budget cannot come back; the new cap must lie above what was spent.
 */
export function admitBudgetUpdate(session: SessionRecord, budget: unknown | null): void {
  if (budget === null) return;
  if (session.budget === null) {
    throw rejected(
      "budget_create_only",
      "budget: a budget can only be set when a session is created; this session has none " +
        "(it was created without one, or it was removed)",
    );
  }
  const cap = capOf(budget);
  admitModels(session.agent);
  if (session.meter.listCost === null) {
    throw rejected(
      "model_not_budgetable",
      "budget: this session already ran a model without a public list price, so a budget cannot measure it; remove the budget instead",
    );
  }
  const spent = wholeCents(BigInt(session.meter.listCost));
  if (cap <= spent) {
    throw rejected(
      "budget_not_raised",
      `budget: max_list_cost must be above the session's consumed list cost (${spent} US cents); ` +
        `${cap} would stop it at once`,
    );
  }
}
