import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/kernel/clock.js";

describe("isoTime (kept last conversion)", () => {
  it("equals Date#toISOString for any sequence of timestamps, repeats included", () => {
    const ms = fc.integer({ min: 0, max: 8_640_000_000_000 });
    fc.assert(
      fc.property(fc.array(fc.oneof(ms, fc.constant(1_700_000_000_000)), { maxLength: 20 }), (times) => {
        for (const t of times) expect(isoTime(t)).toBe(new Date(t).toISOString());
      }),
    );
  });

  it("an invalid timestamp throws and leaves the next conversion right", () => {
    expect(isoTime(1_700_000_000_000)).toBe("2023-11-14T22:13:20.000Z");
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(9e15)).toThrow(RangeError);
    expect(isoTime(1_700_000_000_000)).toBe("2023-11-14T22:13:20.000Z");
    expect(isoTime(0)).toBe("1970-01-01T00:00:00.000Z");
  });
});
