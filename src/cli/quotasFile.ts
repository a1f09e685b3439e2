import { readFileSync } from "node:fs";
import { z } from "zod";
import type { QuotaConfig, WorkspaceLimits } from "../coordinator/workspaceQuotas.js";

/** Where `--quotas` is read from when the flag is not given. */
export const QUOTAS_FILE_ENV = "AWAKEN_QUOTAS_FILE";

const count = z.number().int().nonnegative();
/** Dollars as a JSON number or a decimal string ("12.50"), at most cents. */
const dollars = z
  .union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d{1,2})?$/)])
  .transform((value) => {
    const cents = Math.round(Number(value) * 100);
    return cents;
  });

const limitsSchema = z
  .strictObject({
    concurrent_runs: count.optional(),
    sessions_per_hour: count.optional(),
    tokens_per_day: count.optional(),
    list_cost_per_day_usd: dollars.optional(),
  })
  .transform(
    (l): WorkspaceLimits => ({
      ...(l.concurrent_runs !== undefined ? { concurrentRuns: l.concurrent_runs } : {}),
      ...(l.sessions_per_hour !== undefined ? { sessionsPerHour: l.sessions_per_hour } : {}),
      ...(l.tokens_per_day !== undefined ? { tokensPerDay: l.tokens_per_day } : {}),
      ...(l.list_cost_per_day_usd !== undefined ? { listCostPerDayCents: l.list_cost_per_day_usd } : {}),
    }),
  );

const fileSchema = z.strictObject({
  default: limitsSchema.optional(),
  workspaces: z.record(z.string().min(1), limitsSchema).optional(),
});

/**
 * The operator's workspace quotas, from a JSON file: `{"default": {…}, "workspaces": {"<id>": {…}}}`
 * with `concurrent_runs`, `sessions_per_hour`, `tokens_per_day` and `list_cost_per_day_usd` (each
 * optional; a workspace listed uses its own limits instead of the default's). A file that cannot be
 * read or does not have this shape stops the start-up with what is wrong.
 */
export function readQuotasFile(path: string): QuotaConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `--quotas: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`--quotas: ${path} is not JSON`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.join(".") || "(the file)";
    throw new Error(`--quotas: ${path}: ${at}: ${issue?.message ?? "invalid"}`);
  }
  return { default: parsed.data.default ?? {}, workspaces: parsed.data.workspaces ?? {} };
}
