import { hash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth, so equal values always give equal text.
 * Fingerprints of publications and payload hashes of commit operations are taken over this form.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortDeep(value));
}

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) out[key] = sortDeep(child);
    }
    return out;
  }
  return value;
}

export function sha256Hex(text: string): string {
  // The one-shot digest: no Hash object per call (payload hashes are taken on every send and commit).
  return hash("sha256", text, "hex");
}

export function fingerprint(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
