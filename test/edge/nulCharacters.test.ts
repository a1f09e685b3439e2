import { describe, expect, it } from "vitest";
import { parseJsonBodyText } from "../../src/edge/http/jsonBodyParser.js";
import { nulInUrlStrings } from "../../src/edge/http/urlStrings.js";
import { normalizeQuery, parseQuery } from "../../src/edge/managed-agents/schemas/common.js";
import { listSessionsQuerySchema } from "../../src/edge/managed-agents/schemas/sessions.js";
import { refusal } from "../support/invalidRequest.js";

describe("a NUL in any client string is a 400 naming the field", () => {
  it("in a query value or name (the in-process client reaches normalizeQuery directly)", () => {
    expect(refusal(() => parseQuery(listSessionsQuerySchema, { agent_id: "a\u0000b" }))).toBe(
      "agent_id: contains a NUL character (U+0000), which no field accepts; remove it",
    );
    expect(refusal(() => parseQuery(listSessionsQuerySchema, { "created_at[gt]": ["x", "\u0000"] }))).toMatch(
      /^created_at\[gt\]: contains a NUL character/,
    );
    expect(refusal(() => normalizeQuery({ "a\u0000b": "1" }))).toMatch(/^"a\\u0000b": contains a NUL/);
  });

  it("in a path parameter or a query parameter of the URL", () => {
    expect(nulInUrlStrings({ id: "ses\u0000x" }, {})?.message).toBe(
      "path parameter id: contains a NUL character (U+0000), which no field accepts; remove it",
    );
    expect(nulInUrlStrings({}, { agent_id: ["a", "b\u0000"] })?.message).toMatch(/^agent_id: contains a NUL/);
    expect(nulInUrlStrings({ id: "ses_1" }, { agent_id: "a" })).toBeNull();
  });

  it("in a body string, however deep, value or key", () => {
    expect(refusal(() => parseJsonBodyText('{"title":"a\\u0000b"}'))).toBe(
      "title: contains a NUL character (U+0000), which no field accepts; remove it",
    );
    expect(
      refusal(() => parseJsonBodyText('{"events":[{"content":[{"text":"x"},{"text":"\\u0000"}]}]}')),
    ).toMatch(/^events\[0\]\.content\[1\]\.text: contains a NUL/);
    expect(refusal(() => parseJsonBodyText('{"metadata":{"k\\u0000":"v"}}'))).toBe(
      'metadata["k\\u0000"]: the field name contains a NUL character (U+0000), which no field accepts; remove it',
    );
    expect(refusal(() => parseJsonBodyText('"\\u0000"'))).toMatch(/^request body: contains a NUL/);
  });

  it("a peer's route that carries tool output may hold one", () => {
    expect(parseJsonBodyText('{"text":"a\\u0000b"}', 64, { refuseNul: false })).toEqual({ text: "a\u0000b" });
  });
});
