import { describe, expect, it } from "vitest";
import { catchUp, instantsAfter, nextInstant, validateSchedule } from "../../src/deployments/cronSchedule.js";
import { jitterOf, schedulingPolicyFromEnv } from "../../src/deployments/schedulingPolicy.js";

const at = (iso: string) => Date.parse(iso);
const utc = (expression: string) => ({ expression, timezone: "UTC" });

describe("cron schedules", () => {
  it("accepts POSIX 5-field expressions, names, ranges, lists and steps; 0 and 7 are both Sunday", () => {
    for (const expression of [
      "0 9 * * 1-5",
      "*/15 * * * *",
      "0 0 1,15 * *",
      "0 12 * JAN-MAR MON",
      "5 4 * * 7",
    ])
      expect(validateSchedule(utc(expression)).expression).toBe(expression);
    const sundays = instantsAfter(utc("0 0 * * 7"), at("2026-03-02T00:00:00Z"), 2);
    expect(sundays.map((ms) => new Date(ms).getUTCDay())).toEqual([0, 0]);
    expect(instantsAfter(utc("0 0 * * 0"), at("2026-03-02T00:00:00Z"), 2)).toEqual(sundays);
  });

  it("refuses extended syntax, shortcuts, out-of-range values, impossible dates and non-IANA zones", () => {
    for (const expression of [
      "@daily",
      "* * * * * *",
      "0 0 L * *",
      "0 0 * * 5L",
      "0 0 1W * *",
      "0 0 * * 1#2",
      "0 0 ? * *",
      "60 * * * *",
      "0 0 31 2 *",
      "",
    ])
      expect(() => validateSchedule(utc(expression)), expression).toThrow(/schedule\.expression/);
    for (const timezone of ["Mars/Base", "+01:00", "utc offset", "../etc", "A".repeat(65)])
      expect(() => validateSchedule({ expression: "0 9 * * *", timezone }), timezone).toThrow(
        /schedule\.timezone/,
      );
  });

  it("reads wall-clock time in the zone, across daylight saving time", () => {
    const la = { expression: "0 9 * * *", timezone: "America/Los_Angeles" };
    // 2026-03-08 is the spring-forward day in Los Angeles: 09:00 moves from 17:00 to 16:00 UTC.
    expect(instantsAfter(la, at("2026-03-07T00:00:00Z"), 2).map((ms) => new Date(ms).toISOString())).toEqual([
      "2026-03-07T17:00:00.000Z",
      "2026-03-08T16:00:00.000Z",
    ]);
  });

  it("a wall-clock time skipped by spring forward fires after the gap; one repeated by fall back fires once", () => {
    const ny = (expression: string) => ({ expression, timezone: "America/New_York" });
    const iso = (ms: number[]) => ms.map((m) => new Date(m).toISOString());
    expect(iso(instantsAfter(ny("30 2 * * *"), at("2026-03-07T12:00:00Z"), 2))).toEqual([
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
    ]);
    expect(iso(instantsAfter(ny("30 1 * * *"), at("2026-10-31T12:00:00Z"), 2))).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  it("catch-up fires the latest due instant once and counts the skipped ones", () => {
    const everyMinute = utc("* * * * *");
    const from = at("2030-01-01T00:00:00Z");
    expect(catchUp(everyMinute, from, from + 30_000)).toEqual({
      fire: from,
      skipped: 0,
      next: from + 60_000,
    });
    expect(catchUp(everyMinute, from, from + 5 * 60_000 + 10)).toEqual({
      fire: from + 5 * 60_000,
      skipped: 5,
      next: from + 6 * 60_000,
    });
    expect(nextInstant(utc("0 0 1 1 *"), from)).toBe(at("2031-01-01T00:00:00Z"));
  });
});

describe("scheduling policy", () => {
  it("jitter is fixed per deployment and within the maximum", () => {
    expect(jitterOf("depl_a", 10_000)).toBe(jitterOf("depl_a", 10_000));
    for (const id of ["depl_a", "depl_b", "depl_c"]) expect(jitterOf(id, 10_000)).toBeLessThanOrEqual(10_000);
    expect(jitterOf("depl_a", 0)).toBe(0);
  });

  it("reads the operator's settings and refuses malformed ones", () => {
    expect(schedulingPolicyFromEnv({ AWAKEN_SCHEDULER_TRIGGERS_PER_MINUTE: "5" }).triggersPerMinute).toBe(5);
    expect(() => schedulingPolicyFromEnv({ AWAKEN_SCHEDULER_JITTER_MS: "-1" })).toThrow(
      /AWAKEN_SCHEDULER_JITTER_MS/,
    );
  });
});
