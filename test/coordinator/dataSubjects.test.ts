import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dataSubjectOf, ERASED_TEXT, tombstoneStored } from "../../src/coordinator/dataSubjects.js";
import { decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import { storedFact } from "../support/storedFacts.js";

describe("tombstones through the fact codec", () => {
  it("a tombstoned fact keeps its id and kind, still decodes, and a second erasure changes nothing", () => {
    fc.assert(
      fc.property(storedFact, (fact) => {
        const erased = tombstoneStored(fact) ?? fact;
        const decoded = decodeFact(erased);
        expect(erased.id).toBe(fact.id);
        expect(decoded.kind).toBe(decodeFact(fact).kind);
        expect(encodeFact(decoded)).toEqual(erased);
        expect(tombstoneStored(erased)).toBeNull();
      }),
    );
  });

  it("message text and tool input are replaced, the call's skeleton is kept", () => {
    const message = tombstoneStored({
      id: "sevt_1",
      type: "user.message",
      body: { content: [{ type: "text", text: "my address is 1 Main St" }] },
    });
    expect(message?.body).toEqual({ content: [{ type: "text", text: ERASED_TEXT }] });
  });
});

describe("a session's data subject", () => {
  it("is an opaque id, never a path or a query fragment", () => {
    expect(dataSubjectOf({})).toBeNull();
    expect(dataSubjectOf({ awaken_data_subject: "user-1@tenant:eu" })).toBe("user-1@tenant:eu");
    for (const bad of ["", "..", "../x", "a/b", "a?b", "a#b", "a%2F", " x", "x".repeat(129)])
      expect(() => dataSubjectOf({ awaken_data_subject: bad })).toThrow(/data subject id/);
  });
});
