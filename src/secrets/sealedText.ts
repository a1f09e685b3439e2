import type { SealedSecret } from "./ports.js";

/** Marks a column that holds a sealed envelope rather than plaintext (the format's version too). */
export const SEALED_TEXT_PREFIX = "sealed1:";

/**
 * A sealed envelope as one text column: what stores keep where a table has no columns of its own
 * for the envelope's parts (push configs' tokens, repository resources' tokens). Opening it still
 * needs the identity of the row it is stored in.
 */
export function encodeSealedText(s: SealedSecret): string {
  const json = JSON.stringify({
    f: s.format,
    k: s.masterKeyId,
    w: s.wrappedKey.toString("base64"),
    c: s.ciphertext.toString("base64"),
  });
  return `${SEALED_TEXT_PREFIX}${Buffer.from(json).toString("base64url")}`;
}

/** The envelope a column holds, or null when it holds none (plaintext, or a damaged value). */
export function decodeSealedText(text: string): SealedSecret | null {
  if (!text.startsWith(SEALED_TEXT_PREFIX)) return null;
  try {
    const v = JSON.parse(
      Buffer.from(text.slice(SEALED_TEXT_PREFIX.length), "base64url").toString("utf8"),
    ) as {
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
