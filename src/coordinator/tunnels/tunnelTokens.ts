/**
 * Tunnel connector tokens: 256 random bits, made here and nowhere else. A tunnel keeps its token
 * twice: hashed (SHA-256 is enough for a random 256-bit value) to find the tunnel a connector
 * presents it for, and sealed under the master key (Control's sealer, `tunnel:` identities only),
 * bound to the tunnel and the token's id, because reveal must answer it again.
 */
import { createHash, randomBytes } from "node:crypto";
import type { ScopedSealer } from "../../secrets/ports.js";
import { decodeSealedText, encodeSealedText } from "../../secrets/sealedText.js";

/** Recognisable in a leak scan and in a config file; the rest is base64url of 32 random bytes. */
export const TUNNEL_TOKEN_PREFIX = "awaken-tunnel-";

export type TunnelTokenSealer = ScopedSealer;

export function newTunnelToken(): string {
  return `${TUNNEL_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

export function tunnelTokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

function identity(workspaceId: string, tunnelId: string, tokenId: string) {
  return { credentialId: `tunnel:${tunnelId}/${tokenId}`, revision: 1, workspaceId };
}

export async function sealTunnelToken(
  sealer: TunnelTokenSealer,
  ids: { workspaceId: string; tunnelId: string; tokenId: string },
  token: string,
): Promise<string> {
  const { sealed } = await sealer.seal(identity(ids.workspaceId, ids.tunnelId, ids.tokenId), { token });
  return encodeSealedText(sealed);
}

/** The token, or null when its seal no longer opens (a master key no longer held). */
export async function openTunnelToken(
  sealer: TunnelTokenSealer,
  ids: { workspaceId: string; tunnelId: string; tokenId: string },
  sealedText: string,
): Promise<string | null> {
  const sealed = decodeSealedText(sealedText);
  if (!sealed) return null;
  const value = await sealer
    .openField(identity(ids.workspaceId, ids.tunnelId, ids.tokenId), sealed, "token")
    .catch(() => null);
  if (!value) return null;
  const text = value.toString("utf8");
  value.fill(0);
  return text;
}
