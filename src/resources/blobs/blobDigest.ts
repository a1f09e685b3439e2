import { createHash } from "node:crypto";
import { PlatformError } from "../../kernel/errors.js";
import type { BlobDigest } from "../ports.js";

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The digest of `bytes`: `sha256:<64 lowercase hex>`. */
export function digestOf(bytes: Uint8Array): BlobDigest {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

export function isBlobDigest(value: unknown): value is BlobDigest {
  return typeof value === "string" && DIGEST.test(value);
}

/**
 * Refuses anything but a well-formed digest before it is used as a key or a path: a hostile string
 * (`../../etc/passwd`, a NUL, upper case) never reaches a file system call or a query.
 */
export function checkBlobDigest(digest: unknown): BlobDigest {
  if (!isBlobDigest(digest)) {
    throw new TypeError(
      `not a blob digest (expected sha256:<64 lowercase hex>): ${JSON.stringify(String(digest).slice(0, 80))}`,
    );
  }
  return digest;
}

/** Thrown when stored bytes no longer hash to their address: never hand back wrong bytes. */
export class BlobCorruptedError extends PlatformError {
  constructor(digest: BlobDigest) {
    super("blob_corrupted", `blob ${digest} is corrupted: its stored bytes no longer match their digest`);
    this.name = "BlobCorruptedError";
  }
}
