import { readFileSync } from "node:fs";
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { decodeTraceContext, encodeTraceContext } from "../kernel/traceContext.js";
import type { TraceAttributes, TraceSpan, TraceSpanKind, Tracing } from "../kernel/tracing.js";
import { samplerFromEnv } from "./otelSampler.js";

const KINDS: Record<TraceSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
  consumer: SpanKind.CONSUMER,
};

export interface OpenTelemetry extends Tracing {
  /** Exports every ended span now (on stop: nothing is lost when the process exits next). */
  flush(): Promise<void>;
}

/** The traces endpoint the standard variables name, or null: tracing is off. */
export function otlpTracesUrl(env: NodeJS.ProcessEnv): string | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return null;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

let installed: { provider: TracerProvider; tracing: OpenTelemetry } | null = null;

/**
 * OpenTelemetry traces over OTLP/HTTP (JSON), configured by the standard `OTEL_*` variables; null
 * when none names an endpoint (or `OTEL_SDK_DISABLED=true`). One provider per process: the context
 * manager is process-wide, so a second server in the same process shares the first one's.
 * `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` override `serviceName`; `OTEL_TRACES_SAMPLER`
 * and its `_ARG` choose the sampler (`otelSampler.ts`); the exporter itself reads
 * `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `_COMPRESSION` and the TLS files.
 */
export function startOpenTelemetry(env: NodeJS.ProcessEnv, serviceName: string): OpenTelemetry | null {
  const url = otlpTracesUrl(env);
  if (!url) return null;
  if (installed) return installed.tracing;
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: packageVersion() }),
    )
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: samplerFromEnv(env),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url }),
        scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY) ?? 5_000,
        maxQueueSize: positive(env.OTEL_BSP_MAX_QUEUE_SIZE) ?? 2_048,
        maxExportBatchSize: positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE) ?? 512,
        exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT) ?? 30_000,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  const tracing = openTelemetryTracing(provider);
  installed = { provider, tracing };
  return tracing;
}

function packageVersion(): string {
  const file = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

function positive(value: string | undefined): number | undefined {
  const n = value === undefined ? Number.NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The port over one provider; spans parent on the global context manager's active span. */
export function openTelemetryTracing(provider: TracerProvider): OpenTelemetry {
  const tracer = provider.getTracer("awaken-agents");
  return {
    startSpan(name, kind, attributes, parent) {
      const parentContext = parent === undefined ? context.active() : remoteContext(parent);
      return new OtelSpan(tracer.startSpan(name, { kind: KINDS[kind], attributes }, parentContext));
    },
    withSpan(handle, fn) {
      return handle instanceof OtelSpan
        ? context.with(trace.setSpan(context.active(), handle.span), fn)
        : fn();
    },
    activeContext() {
      const span = trace.getActiveSpan();
      if (!span) return null;
      const c = span.spanContext();
      if (!trace.isSpanContextValid(c)) return null;
      const state = c.traceState?.serialize();
      return encodeTraceContext({
        traceId: c.traceId,
        spanId: c.spanId,
        flags: c.traceFlags,
        tracestate: state ? state : null,
      });
    },
    flush: () => provider.forceFlush(),
  };
}

/** A stored (already validated) context as the remote parent; a root context when absent or invalid. */
function remoteContext(stored: string | null) {
  const parsed = stored === null ? null : decodeTraceContext(stored);
  if (!parsed) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: parsed.flags,
    isRemote: true,
    ...(parsed.tracestate ? { traceState: createTraceState(parsed.tracestate) } : {}),
  });
}

class OtelSpan implements TraceSpan {
  constructor(readonly span: Span) {}

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(attributes);
  }

  end(error?: string): void {
    if (error !== undefined) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      this.span.setAttribute("error.type", error);
    }
    this.span.end();
  }
}

/** The active span's ids for a log line, or nothing (`cliLogger`'s mixin). */
export function activeTraceIds(): { trace_id: string; span_id: string } | null {
  const span = trace.getActiveSpan();
  if (!span) return null;
  const c = span.spanContext();
  return trace.isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : null;
}
