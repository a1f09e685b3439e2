/**
 * A line diff of two texts (longest common subsequence), for comparing two agent versions' JSON.
 * Quadratic, so it refuses texts past a size where a diff stops being readable anyway.
 */
export type DiffLine = { op: "same" | "added" | "removed"; text: string };

export const MAX_DIFF_LINES = 2_000;

export function lineDiff(before: string, after: string): DiffLine[] | null {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return null;
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i]![j] =
        a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      lines.push({ op: "same", text: a[i]! });
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) {
      lines.push({ op: "removed", text: a[i++]! });
    } else {
      lines.push({ op: "added", text: b[j++]! });
    }
  }
  while (i < a.length) lines.push({ op: "removed", text: a[i++]! });
  while (j < b.length) lines.push({ op: "added", text: b[j++]! });
  return lines;
}
