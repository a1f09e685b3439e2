import { type Zippable, zipSync } from "fflate";

/** Every entry's time: the same bytes for the same version, whenever and wherever it is zipped. */
const FIXED_MTIME = new Date(Date.UTC(1980, 0, 2));

/**
 * A version's download: its files under `<name>/`, in path order, with fixed times and level, so
 * one version always zips to the same bytes.
 */
export function skillArchive(
  name: string,
  files: ReadonlyArray<{ path: string; bytes: Uint8Array }>,
): Uint8Array {
  const entries: Zippable = {};
  for (const file of files) entries[`${name}/${file.path}`] = [file.bytes, { mtime: FIXED_MTIME, level: 6 }];
  return zipSync(entries, { mtime: FIXED_MTIME });
}
