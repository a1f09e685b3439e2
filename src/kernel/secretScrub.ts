// Secrets scrubbed out of text that is about to be shown (a captured HTTP answer, a process's
// stderr): every form in which a secret could come back, replaced by `[redacted]`.

export const REDACTED = "[redacted]";

/**
 * Every form in which a secret could come back in a body or an output: as sent, JSON-escaped, URL- and
 * form-encoded, and base64. Longest first, so a form containing another is replaced whole.
 */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
    forms.add(encodeURIComponent(secret));
    forms.add(new URLSearchParams({ s: secret }).toString().slice(2));
    forms.add(Buffer.from(secret, "utf8").toString("base64"));
    forms.add(Buffer.from(secret, "utf8").toString("base64url"));
  }
  return [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of every secret (in any form `secretForms` knows) by `[redacted]`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const form of secretForms(secrets)) out = out.split(form).join(REDACTED);
  return out;
}
