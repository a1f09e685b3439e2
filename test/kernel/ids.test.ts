import { describe, expect, it } from "vitest";
import { newId } from "../../src/kernel/ids.js";

const sorted = (ids: string[]) => [...ids].sort();

describe("newId", () => {
  it("keeps the shape: prefix, 10 clock characters and 16 more, all Crockford base32", () => {
    expect(newId("sesn", 1_700_000_000_000)).toMatch(/^sesn_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it("sorts ids of one millisecond in the order this process made them", () => {
    const ms = 1_800_000_000_000;
    const made = Array.from({ length: 300 }, () => newId("copn", ms));
    expect(sorted(made)).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
  });

  it("keeps a millisecond's order when ids of a later millisecond were made in between", () => {
    for (let round = 0; round < 20; round++) {
      const ms = 1_800_000_000_100 + 10 * round;
      const first = newId("copn", ms);
      const later = newId("copn", ms + 1);
      const second = newId("copn", ms);
      expect(sorted([later, second, first])).toEqual([first, second, later]);
    }
  });

  it("sorts by the clock first", () => {
    const ms = 1_800_000_000_200;
    const a = Array.from({ length: 50 }, () => newId("sevt", ms + 1));
    const b = newId("sevt", ms);
    expect(sorted([...a, b])[0]).toBe(b);
  });

  it("stays unique past the per-millisecond sequence (ordered then only by the random part)", () => {
    const ms = 1_800_000_000_300;
    const made = Array.from({ length: 2_000 }, () => newId("sevt", ms));
    expect(new Set(made).size).toBe(made.length);
    expect(sorted(made.slice(0, 1_024))).toEqual(made.slice(0, 1_024));
  });
});
