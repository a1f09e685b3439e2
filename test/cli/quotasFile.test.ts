/**
 * `--quotas <file>`: the operator's JSON is read into limits (dollars as cents), and a file that
 * cannot be read, is not JSON or has a field it does not know stops the start-up saying what.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readQuotasFile } from "../../src/cli/quotasFile.js";

const dir = mkdtempSync(join(tmpdir(), "awaken-quotas-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("the quotas file", () => {
  it("reads the default and each workspace's limits", () => {
    const path = file(
      "ok.json",
      JSON.stringify({
        default: {
          concurrent_runs: 4,
          sessions_per_hour: 100,
          tokens_per_day: 2_000_000,
          list_cost_per_day_usd: "12.50",
        },
        workspaces: { wrkspc_small: { concurrent_runs: 1, list_cost_per_day_usd: 3 } },
      }),
    );
    expect(readQuotasFile(path)).toEqual({
      default: {
        concurrentRuns: 4,
        sessionsPerHour: 100,
        tokensPerDay: 2_000_000,
        listCostPerDayCents: 1250,
      },
      workspaces: { wrkspc_small: { concurrentRuns: 1, listCostPerDayCents: 300 } },
    });
    expect(readQuotasFile(file("empty.json", "{}"))).toEqual({ default: {}, workspaces: {} });
  });

  it("refuses what it cannot use, naming the file and the field", () => {
    expect(() => readQuotasFile(join(dir, "missing.json"))).toThrow(
      /--quotas: cannot read .*missing\.json: ENOENT/,
    );
    expect(() => readQuotasFile(file("bad.json", "{not json"))).toThrow(/is not JSON/);
    expect(() => readQuotasFile(file("typo.json", '{"default":{"concurent_runs":1}}'))).toThrow(/default/);
    expect(() => readQuotasFile(file("neg.json", '{"default":{"concurrent_runs":-1}}'))).toThrow(
      /default\.concurrent_runs/,
    );
    expect(() => readQuotasFile(file("cents.json", '{"default":{"list_cost_per_day_usd":"1.234"}}'))).toThrow(
      /list_cost_per_day_usd/,
    );
  });
});
