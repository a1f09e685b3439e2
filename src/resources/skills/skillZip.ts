import { unzipSync } from "fflate";
import { AwakenError, invalid } from "../../kernel/errors.js";
import type { UploadedSkillFile } from "./skillBundle.js";
import type { SkillLimits } from "./skillLimits.js";

/** Entries macOS adds to archives it makes; never part of a bundle. */
const METADATA_ENTRY = /(^|\/)(__MACOSX\/|\.DS_Store$)/;

/**
 * Expands a zipped bundle. Entry count and every declared size are checked from the central
 * directory BEFORE any entry is inflated, and each entry inflates into a buffer of its declared
 * size (no more is ever written), so a small archive cannot expand past the limits.
 */
export function expandSkillZip(archive: Uint8Array, limits: SkillLimits): UploadedSkillFile[] {
  const seen = new Set<string>();
  let entries = 0;
  let declaredTotal = 0;
  let expanded: Record<string, Uint8Array>;
  try {
    expanded = unzipSync(archive, {
      filter(entry) {
        if (entry.name.endsWith("/") || METADATA_ENTRY.test(entry.name)) return false;
        // fflate collects entries in a plain object, where this name would set its prototype.
        if (entry.name === "__proto__") throw invalid('the zip holds an entry named "__proto__"');
        entries += 1;
        if (entries > limits.maxFiles) throw invalid(`the zip holds more than ${limits.maxFiles} files`);
        if (seen.has(entry.name)) throw invalid(`the zip holds ${JSON.stringify(entry.name)} twice`);
        seen.add(entry.name);
        if (entry.originalSize > limits.maxFileBytes) {
          throw invalid(
            `${JSON.stringify(entry.name)} would expand to ${entry.originalSize} bytes, more than the ${limits.maxFileBytes} one file may hold`,
          );
        }
        declaredTotal += entry.originalSize;
        if (declaredTotal > limits.maxTotalBytes) {
          throw invalid(`the zip's files would expand to more than ${limits.maxTotalBytes} bytes together`);
        }
        if (entry.compression !== 0 && entry.compression !== 8) {
          throw invalid(`${JSON.stringify(entry.name)} uses an unsupported zip compression method`);
        }
        return true;
      },
    });
  } catch (error) {
    if (error instanceof AwakenError) throw error;
    throw invalid("the .zip upload is not a readable zip archive");
  }
  // fflate keys entries by name; names were checked unique above, so nothing was overwritten.
  return Object.entries(expanded).map(([path, bytes]) => ({ path, bytes }));
}
