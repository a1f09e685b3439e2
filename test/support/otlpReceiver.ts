import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One exported span, flattened from OTLP/HTTP JSON with its resource's `service.name`. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL to set as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received (to search for what must never be exported). */
  bodies: string[];
  close(): Promise<void>;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
};
type OtlpAttribute = { key: string; value: OtlpValue };

function value(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

/** Ids are hex in OTLP JSON; base64 (protobuf-JSON style) is accepted too. */
function hexId(id: string | undefined): string {
  if (!id) return "";
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, "base64").toString("hex");
}

/**
 * A local OTLP/HTTP traces receiver (`POST /v1/traces`, JSON encoding, which
 * @opentelemetry/exporter-trace-otlp-http sends), for tests: it keeps every span it was sent.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let raw = Buffer.concat(chunks);
      if (request.headers["content-encoding"] === "gzip") raw = gunzipSync(raw);
      const text = raw.toString("utf8");
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      bodies.push(text);
      const body = JSON.parse(text) as {
        resourceSpans?: Array<{
          resource?: { attributes?: OtlpAttribute[] };
          scopeSpans?: Array<{
            spans?: Array<{
              traceId?: string;
              spanId?: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: OtlpAttribute[];
              status?: { code?: number; message?: string };
            }>;
          }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributes(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: hexId(s.traceId),
              spanId: hexId(s.spanId),
              parentSpanId: hexId(s.parentSpanId),
              name: s.name,
              kind: s.kind,
              attributes: attributes(s.attributes),
              status: s.status ?? {},
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
