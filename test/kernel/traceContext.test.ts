import { describe, expect, it } from "vitest";
import {
  decodeTraceContext,
  parseTraceparent,
  parseTracestate,
  traceContextFromHeaders,
  traceHeaders,
} from "../../src/kernel/traceContext.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";
const VALID = `00-${TRACE}-${SPAN}-01`;

describe("W3C trace context, read strictly", () => {
  it("accepts the standard's form", () => {
    expect(parseTraceparent(VALID)).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1 });
    // A later version may append fields; its first four are read.
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-00-future`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 0,
    });
  });

  it.each([
    ["upper case", `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ["version ff", `ff-${TRACE}-${SPAN}-01`],
    ["trailing data on version 00", `${VALID}-extra`],
    ["surrounding whitespace", ` ${VALID} `],
    ["all-zero trace id", `00-${"0".repeat(32)}-${SPAN}-01`],
    ["all-zero parent id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["short trace id", `00-${TRACE.slice(1)}-${SPAN}-01`],
    ["not hex", `00-${TRACE.replace("4", "g")}-${SPAN}-01`],
    ["empty", ""],
  ])("ignores a malformed traceparent: %s", (_why, header) => {
    expect(parseTraceparent(header)).toBeNull();
    expect(traceContextFromHeaders(header, "vendor=1")).toBeNull();
  });

  it("ignores a repeated or missing header", () => {
    expect(traceContextFromHeaders([VALID, VALID], undefined)).toBeNull();
    expect(traceContextFromHeaders(undefined, "vendor=1")).toBeNull();
  });

  it("keeps a valid tracestate, drops a malformed one and keeps the parent", () => {
    expect(parseTracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")).toBe(
      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    );
    expect(parseTracestate("tenant@vendor=x")).toBe("tenant@vendor=x");
    for (const bad of ["no-equals", "UPPER=1", "a=b=c,", "x".repeat(600), "a=1,".repeat(40)]) {
      expect(parseTracestate(bad)).toBeNull();
    }
    expect(traceContextFromHeaders(VALID, "BAD")).toBe(VALID);
  });

  it("stores one string and hands the same headers back", () => {
    const stored = traceContextFromHeaders(VALID, "vendor=abc");
    expect(stored).toBe(`${VALID} vendor=abc`);
    expect(decodeTraceContext(stored!)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 1,
      tracestate: "vendor=abc",
    });
    expect(traceHeaders(stored!)).toEqual({ traceparent: VALID, tracestate: "vendor=abc" });
    expect(traceHeaders(VALID)).toEqual({ traceparent: VALID });
    expect(decodeTraceContext("garbage")).toBeNull();
  });
});
