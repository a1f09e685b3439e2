/**
 * Forwarding one HTTP request from a sandbox to its checked destination (egressProxy.ts), with
 * secret substitution: for a host a credential allows (the environment's policy was checked
 * before), each placeholder found where the credential may be injected (headers, body) is replaced
 * by the secret, opened through admission for this request only and zeroed once used. Elsewhere the
 * placeholder goes out as it is: never the secret.
 *
 * Plain `http://` requests come straight from the proxy; HTTPS ones from its TLS interception of a
 * CONNECT to a host with a substitution (`tls: true`: forwarded over TLS, the upstream certificate
 * verified as any client would).
 */

import {
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import type { EgressSecrets } from "./egressSecrets.js";
import { type HeaderMap, headersMention, substituteBody, substituteHeaders } from "./secretSubstitution.js";

const UPSTREAM_TIMEOUT_MS = 10_000;
/** A body the proxy must search for placeholders is read whole; larger ones are refused. */
export const MAX_SUBSTITUTED_BODY_BYTES = 16 * 2 ** 20;

/** Where a request goes: the checked address, the name it was checked (and verified) under. */
export interface ForwardTarget {
  host: string;
  port: number;
  address: string;
  family: 4 | 6;
  /** Over TLS (an intercepted CONNECT), verifying the upstream's certificate for `host`. */
  tls: boolean;
  /** Origin-form path and query. */
  path: string;
}

export interface ForwardOptions {
  secrets: EgressSecrets | null;
  /** Extra CAs trusted for upstream TLS (tests only; the default is Node's own list). */
  upstreamCa?: readonly string[];
}

function plain(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** The request's body, whole, or null past the cap. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const piece = chunk as Buffer;
    size += piece.length;
    if (size > MAX_SUBSTITUTED_BODY_BYTES) return null;
    chunks.push(piece);
  }
  return Buffer.concat(chunks);
}

/** Forwards `req` to `target`, substituting secrets where allowed; answers on `res`. */
export async function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  target: ForwardTarget,
  options: ForwardOptions,
): Promise<void> {
  let headers: HeaderMap = { ...req.headers };
  delete headers["proxy-connection"];
  delete headers["proxy-authorization"];
  headers.host =
    target.port === (target.tls ? 443 : 80)
      ? hostHeader(target.host)
      : `${hostHeader(target.host)}:${target.port}`;

  const substitutions = options.secrets?.forHost(target.host) ?? [];
  const bodySubstitutions = substitutions.filter((entry) => entry.injection.body);
  let body: Buffer | null = null;
  if (bodySubstitutions.length > 0 && hasBody(req)) {
    body = await readBody(req);
    if (body === null) {
      plain(
        res,
        413,
        `sandbox egress: a request body searched for secrets may be at most ${MAX_SUBSTITUTED_BODY_BYTES} bytes\n`,
      );
      return;
    }
  }
  // Only the secrets this request actually names are opened (each open is admitted and audited).
  const wanted = substitutions.filter(
    (entry) =>
      (entry.injection.header && headersMention(headers, entry.placeholder)) ||
      (entry.injection.body && body?.includes(entry.placeholder) === true),
  );
  const zeroLater: Buffer[] = [];
  for (const entry of wanted) {
    const secret = await options.secrets?.open(entry.secretName);
    if (!secret) {
      plain(res, 403, `sandbox egress refused: the credential for ${entry.secretName} could not be used\n`);
      return;
    }
    if (entry.injection.header)
      headers = substituteHeaders(headers, entry.placeholder, secret.toString("utf8"));
    if (entry.injection.body && body !== null) {
      const next = substituteBody(body, Buffer.from(entry.placeholder), secret);
      if (next) {
        zeroLater.push(next);
        body = next;
      }
    }
    secret.fill(0);
  }
  if (body !== null) {
    delete headers["transfer-encoding"];
    headers["content-length"] = String(body.length);
  }

  const request = target.tls ? httpsRequest : httpRequest;
  const upstream = request({
    host: target.address,
    family: target.family,
    port: target.port,
    method: req.method,
    path: target.path,
    headers: headers as OutgoingHttpHeaders,
    setHost: false,
    timeout: UPSTREAM_TIMEOUT_MS,
    agent: false,
    ...(target.tls
      ? {
          // Verified against the name the sandbox asked for, as its own client would have.
          ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
          ...(options.upstreamCa ? { ca: [...rootCertificates, ...options.upstreamCa] } : {}),
        }
      : {}),
  });
  // Buffers that held a secret are zeroed once the request left (or failed).
  const zero = () => {
    for (const buffer of zeroLater) buffer.fill(0);
    zeroLater.length = 0;
  };
  upstream.once("finish", zero);
  upstream.once("close", zero);
  upstream.once("response", (response) => {
    upstream.setTimeout(0);
    res.writeHead(response.statusCode ?? 502, response.rawHeaders);
    response.pipe(res);
  });
  upstream.once("timeout", () => upstream.destroy(new Error("upstream timeout")));
  upstream.once("error", (error) => {
    // Never the message of a TLS error with a request attached: only what failed.
    plain(
      res,
      502,
      `sandbox egress: the upstream failed (${(error as NodeJS.ErrnoException).code ?? error.message})\n`,
    );
  });
  if (body !== null) upstream.end(body);
  else req.pipe(upstream);
}

function hostHeader(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
