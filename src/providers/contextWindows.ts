/**
 * How many input tokens each model reads at most: its context window. Known families have their
 * published window; any other model (the offline model, a model released later) gets the default.
 * The operator may set windows per model id with AWAKEN_CONTEXT_WINDOWS
 * (`<model id>=<tokens>,…`), which wins over the table: a deployment behind a proxy with a smaller
 * limit, or a test that wants a conversation to outgrow its window in a few turns.
 */

export const CONTEXT_WINDOWS_ENV = "AWAKEN_CONTEXT_WINDOWS";
export const DEFAULT_CONTEXT_WINDOW = 200_000;
/** The smallest window an operator may set: below it no request with an answer fits. */
export const MIN_CONTEXT_WINDOW = 1_024;
const MAX_CONTEXT_WINDOW = 100_000_000;

/** By id prefix, most specific first (a lowercase id is matched). */
const PUBLISHED_WINDOWS: ReadonlyArray<readonly [string, number]> = [
  ["claude-", 200_000],
  ["gpt-4.1", 1_047_576],
  ["gpt-4o", 128_000],
  ["gpt-5", 400_000],
  ["o1", 200_000],
  ["o3", 200_000],
  ["o4", 200_000],
];

export type ContextWindows = (model: string) => number;

/** The windows this process's environment sets; throws on a malformed AWAKEN_CONTEXT_WINDOWS. */
export function contextWindowsFromEnv(env: NodeJS.ProcessEnv): ContextWindows {
  const overrides = parseOverrides(env[CONTEXT_WINDOWS_ENV] ?? "");
  return (model) => {
    const set = overrides.get(model);
    if (set !== undefined) return set;
    const id = model.toLowerCase();
    return PUBLISHED_WINDOWS.find(([prefix]) => id.startsWith(prefix))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
  };
}

function parseOverrides(raw: string): Map<string, number> {
  const windows = new Map<string, number>();
  for (const entry of raw.split(",")) {
    if (entry.trim() === "") continue;
    const match = /^\s*([^=\s]+)\s*=\s*(\d+)\s*$/.exec(entry);
    const tokens = match ? Number(match[2]) : Number.NaN;
    if (
      !match?.[1] ||
      !Number.isSafeInteger(tokens) ||
      tokens < MIN_CONTEXT_WINDOW ||
      tokens > MAX_CONTEXT_WINDOW
    )
      throw new Error(
        `${CONTEXT_WINDOWS_ENV} must list <model id>=<tokens> entries separated by commas, each window ${MIN_CONTEXT_WINDOW}-${MAX_CONTEXT_WINDOW} tokens; got ${JSON.stringify(entry.trim().slice(0, 80))}`,
      );
    windows.set(match[1], tokens);
  }
  return windows;
}
