import type { RevisionIdentity, SealedSecret } from "../../secrets/ports.js";

const PREFIX = "sealed1:";
/** Every repository token's sealing identity starts so; the sealer lent to this family opens no other. */
export const REPOSITORY_IDENTITY = "repo:";

/** A repository resource's token identity: its id, the token's revision and the workspace. */
export const tokenIdentity = (
  workspaceId: string,
  resourceId: string,
  revision: number,
): RevisionIdentity => ({
  credentialId: `${REPOSITORY_IDENTITY}${resourceId}`,
  revision,
  workspaceId,
});

/** The sealed envelope as one text column (the same layout push configs' tokens use). */
export function encodeSealed(s: SealedSecret): string {
  const json = JSON.stringify({
    f: s.format,
    k: s.masterKeyId,
    w: s.wrappedKey.toString("base64"),
    c: s.ciphertext.toString("base64"),
  });
  return `${PREFIX}${Buffer.from(json).toString("base64url")}`;
}

export function decodeSealed(text: string): SealedSecret | null {
  if (!text.startsWith(PREFIX)) return null;
  try {
    const v = JSON.parse(Buffer.from(text.slice(PREFIX.length), "base64url").toString("utf8")) as {
      f: number;
      k: string;
      w: string;
      c: string;
    };
    return {
      format: v.f,
      masterKeyId: v.k,
      wrappedKey: Buffer.from(v.w, "base64"),
      ciphertext: Buffer.from(v.c, "base64"),
    };
  } catch {
    return null;
  }
}
