import { context, ROOT_CONTEXT, SpanKind, TraceFlags, trace } from "@opentelemetry/api";
import { SamplingDecision } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { samplerFromEnv } from "../../src/observability/otelSampler.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

/** The decision for a new span under a remote parent with the given flags (or as a root). */
function decide(env: NodeJS.ProcessEnv, parentFlags?: TraceFlags): SamplingDecision {
  const parent =
    parentFlags === undefined
      ? ROOT_CONTEXT
      : trace.setSpanContext(context.active(), {
          traceId: TRACE_ID,
          spanId: "00f067aa0ba902b7",
          traceFlags: parentFlags,
          isRemote: true,
        });
  return samplerFromEnv(env).shouldSample(parent, TRACE_ID, "span", SpanKind.SERVER, {}, []).decision;
}

const SAMPLED = SamplingDecision.RECORD_AND_SAMPLED;
const DROPPED = SamplingDecision.NOT_RECORD;

describe("the sampler from OTEL_TRACES_SAMPLER", () => {
  it("unset follows the parent's decision and samples roots", () => {
    expect(decide({})).toBe(SAMPLED);
    expect(decide({}, TraceFlags.SAMPLED)).toBe(SAMPLED);
    expect(decide({}, TraceFlags.NONE)).toBe(DROPPED);
  });

  it("reads each standard name, case-insensitively, with its ratio", () => {
    expect(decide({ OTEL_TRACES_SAMPLER: "always_off" }, TraceFlags.SAMPLED)).toBe(DROPPED);
    expect(decide({ OTEL_TRACES_SAMPLER: "ALWAYS_ON" }, TraceFlags.NONE)).toBe(SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })).toBe(DROPPED);
    expect(decide({ OTEL_TRACES_SAMPLER: "parentbased_always_off" }, TraceFlags.SAMPLED)).toBe(SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" })).toBe(DROPPED);
    expect(decide({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" })).toBe(SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: "traceidratio" })).toBe(SAMPLED);
    // Parent-based ratio: a sampled parent wins over a ratio of 0.
    const ratioZero = { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" };
    expect(decide(ratioZero)).toBe(DROPPED);
    expect(decide(ratioZero, TraceFlags.SAMPLED)).toBe(SAMPLED);
  });

  it("refuses what it cannot read, naming the variable", () => {
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: "jaeger_remote" })).toThrow(
      /OTEL_TRACES_SAMPLER=.*always_on/,
    );
    for (const arg of ["1.5", "-0.1", "half", "NaN"]) {
      expect(() =>
        samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: arg }),
      ).toThrow(/OTEL_TRACES_SAMPLER_ARG=.*from 0 to 1/);
    }
  });
});
