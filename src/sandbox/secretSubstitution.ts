/**
 * Secret substitution for the egress proxy (vault `environment_variable` credentials, wire §5):
 * commands in the sandbox hold a placeholder (`awaken-secret-<random>`), never the secret; the
 * proxy, outside the sandbox, replaces the placeholder in a request's headers and/or body with the
 * secret, and only for a host the credential allows (the environment's own policy is checked
 * before, by the proxy). Pure functions: which substitutions apply to a host, and the replacing.
 */

import { randomBytes } from "node:crypto";
import { hostAllowed } from "./egressHosts.js";
import type { SandboxSecretVariable } from "./ports.js";

/** The prefix of every placeholder: recognizable in logs and tool output, and never a secret. */
export const PLACEHOLDER_PREFIX = "awaken-secret-";

/**
 * Variables a credential may not set: they carry the sandbox's own plumbing (proxy, trust store,
 * paths). An ingress name equal to one of them is not set (and not substituted).
 */
export const RESERVED_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "LANG",
  "PWD",
  "NODE_PATH",
  "PYTHONPATH",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "http_proxy",
  "https_proxy",
  "NO_PROXY",
  "no_proxy",
  "SSL_CERT_FILE",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
]);

/** A random, non-secret token standing for one secret inside one sandbox. */
export function newPlaceholder(): string {
  return `${PLACEHOLDER_PREFIX}${randomBytes(16).toString("hex")}`;
}

/** One variable of a sandbox: its placeholder there, and where its secret may go. */
export interface Substitution extends SandboxSecretVariable {
  placeholder: string;
}

/** Whether a credential's own networking lets its secret go to `host`. */
export function credentialAllowsHost(variable: SandboxSecretVariable, host: string): boolean {
  return variable.networking.type === "unrestricted" || hostAllowed(host, variable.networking.allowed_hosts);
}

/** The substitutions whose credential allows `host` (the environment's policy is checked apart). */
export function substitutionsFor(table: readonly Substitution[], host: string): Substitution[] {
  return table.filter((entry) => credentialAllowsHost(entry, host));
}

/** Header names never substituted into: they route or frame the request, they do not authenticate it. */
const UNTOUCHED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);

/** Request headers as node:http gives them (lower-case names). */
export type HeaderMap = Record<string, string | string[] | undefined>;

/** Whether any header value (but the routing ones) holds `placeholder`. */
export function headersMention(headers: HeaderMap, placeholder: string): boolean {
  for (const [name, value] of Object.entries(headers)) {
    if (UNTOUCHED_HEADERS.has(name) || value === undefined) continue;
    if ((Array.isArray(value) ? value : [value]).some((item) => item.includes(placeholder))) return true;
  }
  return false;
}

/**
 * `headers` with `placeholder` replaced by `secret` in every value (but the routing headers). The
 * result holds the secret as JS strings (http.request takes strings): those cannot be zeroed and
 * live until the request is collected; the Buffer the secret came from is zeroed by the caller.
 */
export function substituteHeaders(headers: HeaderMap, placeholder: string, secret: string): HeaderMap {
  const out: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) {
    if (UNTOUCHED_HEADERS.has(name) || value === undefined) {
      out[name] = value;
      continue;
    }
    const replace = (item: string) => item.split(placeholder).join(secret);
    out[name] = Array.isArray(value) ? value.map(replace) : replace(value);
  }
  return out;
}

/**
 * `body` with every occurrence of `needle` replaced by `value`, in a new Buffer, or null when
 * `needle` does not occur (then `body` is used as is). Buffers only: no string is made of the body.
 */
export function substituteBody(body: Buffer, needle: Buffer, value: Buffer): Buffer | null {
  if (needle.length === 0) return null;
  let at = body.indexOf(needle);
  if (at < 0) return null;
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(body.subarray(from, at), value);
    from = at + needle.length;
    at = body.indexOf(needle, from);
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}
