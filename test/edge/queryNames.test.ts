import { describe, expect, it } from "vitest";
import { createAgentBodySchema } from "../../src/edge/managed-agents/schemas/agents.js";
import { normalizeQuery, parseBody } from "../../src/edge/managed-agents/schemas/common.js";
import { refusal } from "../support/invalidRequest.js";

describe("query names a client chooses never reach a prototype", () => {
  it("normalizeQuery builds objects without a prototype, nested ones too", () => {
    const query = normalizeQuery({ limit: "5", "created_at[gte]": "2026-01-01T00:00:00Z" });
    expect(Object.getPrototypeOf(query)).toBeNull();
    expect(Object.getPrototypeOf(query.created_at)).toBeNull();
    expect(query).toEqual({ limit: "5", created_at: { gte: "2026-01-01T00:00:00Z" } });
  });

  it.each([
    ["__proto__[x]", '"__proto__"'],
    ["constructor[prototype][x]", '"constructor"'],
    ["__proto__", '"__proto__"'],
    ["prototype", '"prototype"'],
    ["constructor", '"constructor"'],
    ["created_at[__proto__]", '"__proto__"'],
    ["a[b][prototype]", '"prototype"'],
  ])("%s is refused with a 400 naming it, and pollutes nothing", (key, named) => {
    const message = refusal(() => normalizeQuery({ [key]: "1" }));
    expect(message).toContain(key);
    expect(message).toContain(`the name ${named} is not accepted`);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, "x")).toBe(false);
  });

  it("is refused even with an empty value, which would otherwise be dropped", () => {
    expect(refusal(() => normalizeQuery({ "__proto__[x]": "" }))).toMatch(/"__proto__" is not accepted/);
  });

  it("names that merely contain the words are ordinary parameters", () => {
    expect(normalizeQuery({ my_prototype: "1", "a[constructors]": "2" })).toEqual({
      my_prototype: "1",
      a: { constructors: "2" },
    });
  });

  it("an unknown body field named constructor gets the ordinary message, not Object's source", () => {
    const message = refusal(() =>
      parseBody(createAgentBodySchema, { name: "a", model: "m", constructor: 1 }),
    );
    expect(message).toBe("constructor: unknown field; remove it");
  });
});
