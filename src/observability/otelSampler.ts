import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";

const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

/**
 * The sampler the standard `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` variables name (the
 * trace SDK this project uses no longer reads them itself). Unset is `parentbased_always_on`: a
 * client's sampled `traceparent` is followed, an unsampled one is not, and the decision travels
 * with the run to its worker. A value it cannot read is a start-up error naming the variable:
 * sampling silently falling back would hide a misconfiguration until the traces are needed.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on") as string;
  if (!(SAMPLERS as readonly string[]).includes(name)) {
    throw new Error(
      `OTEL_TRACES_SAMPLER=${JSON.stringify(env.OTEL_TRACES_SAMPLER)} is not a sampler this server knows; use one of ${SAMPLERS.join(", ")}.`,
    );
  }
  const root = rootSampler(name.replace(/^parentbased_/, ""), env);
  return name.startsWith("parentbased_") ? new ParentBasedSampler({ root }) : root;
}

function rootSampler(name: string, env: NodeJS.ProcessEnv): Sampler {
  if (name === "always_on") return new AlwaysOnSampler();
  if (name === "always_off") return new AlwaysOffSampler();
  return new TraceIdRatioBasedSampler(ratioOf(env.OTEL_TRACES_SAMPLER_ARG));
}

/** The sampled fraction for the ratio samplers: 0 to 1, all traces when unset. */
function ratioOf(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 1;
  const ratio = Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new Error(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(raw)} must be a number from 0 to 1.`);
  }
  return ratio;
}
