import { describe, expect, it } from "vitest";
import type { Session } from "../../src/console/api/wire.js";
import { budgetView, formatCents, formatSeconds } from "../../src/console/projection/budget.js";

const session = (budgetCents: string | null, spent: string | null | undefined) =>
  ({
    budget:
      budgetCents === null
        ? null
        : { type: "limit", max_list_cost: { amount: budgetCents, currency: "USD" } },
    usage:
      spent === undefined ? {} : { list_cost: spent === null ? null : { amount: spent, currency: "USD" } },
  }) as Pick<Session, "budget" | "usage">;

describe("the budget projection", () => {
  it("no budget: nothing to show", () => {
    expect(budgetView(session(null, "12"))).toBeNull();
  });

  it("the limit, the spend and the share of it", () => {
    expect(budgetView(session("2500", "625"))).toEqual({
      currency: "USD",
      limitCents: 2500,
      spentCents: 625,
      fraction: 0.25,
      reached: false,
    });
  });

  it("a spend at or past the limit is reached, the share capped at the whole", () => {
    expect(budgetView(session("100", "100"))).toMatchObject({ fraction: 1, reached: true });
    expect(budgetView(session("100", "130"))).toMatchObject({ fraction: 1, reached: true });
  });

  it("a spend nothing can measure (null list cost) is unknown and stops the session as reached", () => {
    expect(budgetView(session("100", null))).toMatchObject({
      spentCents: null,
      fraction: null,
      reached: true,
    });
  });

  it("no list cost yet (nothing committed) is unknown too", () => {
    expect(budgetView(session("100", undefined))).toMatchObject({ spentCents: null });
  });

  it("formats cents and seconds", () => {
    expect(formatCents(2500, "USD")).toBe("$25.00");
    expect(formatCents(7, "USD")).toBe("$0.07");
    expect(formatCents(1234, "EUR")).toBe("12.34 EUR");
    expect(formatSeconds(5)).toBe("5 s");
    expect(formatSeconds(125)).toBe("2 min 5 s");
    expect(formatSeconds(3725)).toBe("1 h 2 min 5 s");
  });
});
