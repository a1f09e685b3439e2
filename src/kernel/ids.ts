import { randomBytes } from "node:crypto";

// Crockford base32: ids sort by creation time (the first 10 characters are the millisecond clock),
// which keeps cursor pagination by id equivalent to pagination by creation order.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function encodeTime(ms: number): string {
  let out = "";
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function encodeRandom(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte % 32];
  return out;
}

export type IdPrefix =
  | "agent"
  | "env"
  | "sesn"
  | "sthr"
  | "sevt"
  | "run"
  | "wrkspc"
  | "key"
  | "req"
  | "op"
  | "wkr"
  | "vlt"
  | "vcrd"
  | "copn";

export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${encodeTime(nowMs)}${encodeRandom(16)}`;
}
