import { z } from "zod";

/**
 * The presence stream: one long-lived request a remote worker holds open to the coordinator for
 * as long as it runs, so the coordinator learns of its death from the socket's close (a killed
 * process's kernel closes it at once) instead of from its leases running out. The request names
 * the worker and the claims it holds (renewed first, so a worker back after a blip keeps them);
 * the answer is a stream of newlines (`PRESENCE_HEARTBEAT_MS` apart) that never ends while both
 * sides are up.
 */
export const PRESENCE_PATH = "/presence";
/** How often the coordinator writes a newline: keeps proxies from cutting an idle stream. */
export const PRESENCE_HEARTBEAT_MS = 10_000;
/** A worker that heard nothing for this long takes the stream for dead and opens another. */
export const PRESENCE_SILENCE_MS = 3 * PRESENCE_HEARTBEAT_MS;
/** More claims than any worker's slots; a bound on what one hello makes the coordinator renew. */
export const MAX_PRESENCE_HELD = 1_000;

const id = z.string().min(1).max(200);

export const presenceRequestSchema = z.object({
  /** `<worker id>.<incarnation>`: every owner the worker claims as is `<identity>/<slot>`. */
  identity: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^/\s\p{Cc}]+$/u, "a worker identity has no slash, space or control character"),
  held: z
    .array(z.object({ runId: id, owner: id, epoch: z.number().int().nonnegative() }))
    .max(MAX_PRESENCE_HELD),
});

export type PresenceRequest = z.infer<typeof presenceRequestSchema>;
