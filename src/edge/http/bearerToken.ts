import { hash, timingSafeEqual } from "node:crypto";

/**
 * A check of `Authorization: Bearer <token>` against one shared token (the worker transport's, the
 * Control link's). Fixed-length SHA-256 digests are compared in constant time, so neither the
 * token's content nor its length leaks; the expected digest is computed once.
 */
export function bearerTokenCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    const presented = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? "")?.[1]?.trim();
    return presented !== undefined && presented !== "" && timingSafeEqual(digest(presented), expected);
  };
}

function digest(value: string): Buffer {
  return hash("sha256", value, "buffer");
}
