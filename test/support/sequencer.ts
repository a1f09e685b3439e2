/**
 * The order vitest hands test files to its workers. Its default runs one project's files after the
 * other's; this one orders the files of every project together, longest first by the last run's
 * timings, so the fault suite's split-deployment project overlaps the rest of the suite instead of
 * trailing it. Files without timings (a fresh checkout: CI) go first, largest first, and a file
 * that failed last time goes before the rest, as in vitest's own order.
 */
import { statSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = new Map(
      files.map((spec) => {
        const last = this.ctx.cache.getTestSpecificationResult(spec);
        // Unknown files first (by size), then failed ones, then by duration; larger sorts first.
        const key: [number, number] = last
          ? [last.failed ? 1 : 0, last.duration]
          : [2, statSync(spec.moduleId).size];
        return [spec, key] as const;
      }),
    );
    return [...files].sort((a, b) => {
      const [ka, kb] = [rank.get(a)!, rank.get(b)!];
      return kb[0] - ka[0] || kb[1] - ka[1];
    });
  }
}
