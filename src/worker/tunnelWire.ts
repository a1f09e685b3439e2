/**
 * The wire of a remote run's MCP requests through a tunnel (`POST /v1/awaken/worker/tunnels/fetch`):
 * the request, naming the run's claim, and the whole answer. The coordinator checks the claim live
 * first, then hands the request to its tunnel relay for the claim's own workspace. Request and
 * answer are buffered (one JSON document each, like every worker route), so only exchanges that
 * end cross: the remote relay answers a standalone event stream (GET) 405 itself.
 */
import { z } from "zod";
import { claimPart } from "./credentialWire.js";

/** The largest body either way (an MCP message is far smaller). */
export const MAX_WIRE_TUNNEL_BODY_BYTES = 16 * 1024 * 1024;

const base64 = z
  .string()
  .max(Math.ceil(MAX_WIRE_TUNNEL_BODY_BYTES / 3) * 4)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, "expected base64");
const headers = z.array(z.tuple([z.string().min(1).max(256), z.string().max(16 * 1024)])).max(200);

export const TUNNEL_ROUTES = {
  tunnelFetch: {
    path: "/tunnels/fetch",
    request: z.strictObject({
      ...claimPart,
      url: z
        .string()
        .min(1)
        .max(8 * 1024),
      method: z.string().regex(/^[A-Z]{1,16}$/),
      headers,
      body: base64.nullable(),
    }),
    response: z.discriminatedUnion("kind", [
      z.strictObject({
        kind: z.literal("response"),
        status: z.number().int().min(200).max(599),
        headers,
        body: base64,
      }),
      z.strictObject({ kind: z.literal("failed"), message: z.string().max(4 * 1024) }),
      z.strictObject({ kind: z.literal("claim_lost"), reason: z.string() }),
    ]),
  },
} as const;
