import { z } from "zod";
import type { WakeSignal } from "../../coordinator/wakeSignals.js";

/** A key's revocation, told to every replica so it drops its cached answers (the key's id only). */
export interface KeyRevokedNotice {
  kind: "revoked";
  key: string;
}

/** What travels on a schema's NOTIFY channel: the coordinator's wake signals and Control's revocations. */
export type WakeNotice = WakeSignal | KeyRevokedNotice;

const Payload = z.discriminatedUnion("kind", [
  z.object({ from: z.string(), kind: z.literal("thread"), thread: z.string(), version: z.number() }),
  z.object({ from: z.string(), kind: z.literal("dispatch"), run: z.string().optional() }),
  z.object({ from: z.string(), kind: z.literal("cancel"), run: z.string() }),
  z.object({ from: z.string(), kind: z.literal("revoked"), key: z.string() }),
]);

export type DecodedNotice = z.infer<typeof Payload>;

const KINDS: ReadonlySet<string> = new Set(Payload.options.map((option) => option.shape.kind.value));

/**
 * The payload `from` (the sending process) publishes `notice` with. The same notice from the same
 * sender is the same string: a commit's carried payload is recognised by it.
 */
export function encodeWakeNotice(from: string, notice: WakeNotice): string {
  return JSON.stringify({ from, ...notice });
}

/**
 * The notice a payload carries; null for a kind this version does not know (a newer replica's, in
 * a rolling upgrade), which is ignored. Throws on a malformed payload.
 */
export function decodeWakeNotice(raw: string): DecodedNotice | null {
  const json: unknown = JSON.parse(raw);
  const parsed = Payload.safeParse(json);
  if (parsed.success) return parsed.data;
  // Only a failed parse looks further: the known kinds cost what they did.
  const kind = typeof json === "object" && json !== null ? (json as { kind?: unknown }).kind : undefined;
  if (typeof kind === "string" && !KINDS.has(kind)) return null;
  throw parsed.error;
}
