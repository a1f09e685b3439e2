/**
 * MCP tunnels and tunnel certificates request schemas (param types from `@anthropic-ai/sdk`
 * resources/beta/tunnels). The CA certificate's PEM is bounded here and checked in full (one
 * certificate, no key, a CA, not expired) by the tunnel service.
 */
import { z } from "zod";
import { CA_PEM_MAX_BYTES } from "../../../coordinator/tunnels/caCertificate.js";
import { boundedString, paginationQuery, queryBoolean } from "./common.js";

export const TUNNEL_LIMITS = { displayName: 255, reason: 1024 } as const;

/** Human-readable name (1-255 characters, SDK); no control characters (it is shown in lists). */
const displayName = boundedString(1, TUNNEL_LIMITS.displayName).refine((name) => !/\p{Cc}/u.test(name), {
  error: "must not contain control characters",
});

export const createTunnelBodySchema = z.strictObject({
  display_name: displayName.nullish(),
});

export const rotateTunnelTokenBodySchema = z.strictObject({
  reason: boundedString(0, TUNNEL_LIMITS.reason).nullish(),
});

export const listTunnelsQuerySchema = z.strictObject({
  include_archived: queryBoolean.default(false),
  ...paginationQuery,
});

export const createTunnelCertificateBodySchema = z.strictObject({
  ca_certificate_pem: boundedString(1, CA_PEM_MAX_BYTES),
});

/** The archive, reveal and certificate archive bodies: nothing, or an empty object. */
export const emptyBodySchema = z.strictObject({});
