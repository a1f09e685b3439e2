import { createHash } from "node:crypto";
import type { SkillFileRecord } from "./ports.js";
import { compareBytes } from "./skillBundle.js";

/**
 * A version's content digest: `sha256:` over its canonical listing, one line per file sorted by
 * path, `<path>\t<file digest>\n` (paths hold no control characters, so the listing is
 * unambiguous). Two uploads of the same files have the same digest whatever their order.
 */
export function skillContentDigest(files: readonly Pick<SkillFileRecord, "path" | "digest">[]): string {
  const listing = [...files]
    .sort((a, b) => compareBytes(a.path, b.path))
    .map((file) => `${file.path}\t${file.digest}\n`)
    .join("");
  return `sha256:${createHash("sha256").update(listing, "utf8").digest("hex")}`;
}
