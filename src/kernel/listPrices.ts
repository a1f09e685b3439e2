/**
 * Public list prices of the models the product can run, and the list cost of a model request at
 * them: what a session budget (`max_list_cost`) is measured against. List price, never a
 * negotiated one, so a budget stops a session at or before what it was actually charged.
 *
 * Prices are in thousandths of a US cent per million tokens, so every published price is an integer;
 * a request's cost is then tokens × price in billionths of a cent ("nano-cents"), summed exactly as a
 * bigint and rounded up to whole cents only where a cost is shown or compared with a budget.
 */

/** One model's prices, in thousandths of a cent per million tokens. */
export interface ListPrice {
  input: number;
  output: number;
  /** Writing a prompt-cache entry (the 5-minute TTL the product asks for). */
  cacheWrite: number;
  cacheRead: number;
}

/** The token counters a model request reports (the domain's `SessionUsage` has this shape). */
export interface PricedTokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** US dollars per million tokens → thousandths of a cent per million tokens. */
const usd = (input: number, output: number, cacheWrite: number, cacheRead: number): ListPrice => ({
  input: Math.round(input * 100_000),
  output: Math.round(output * 100_000),
  cacheWrite: Math.round(cacheWrite * 100_000),
  cacheRead: Math.round(cacheRead * 100_000),
});

const OPUS_4_5 = usd(5, 25, 6.25, 0.5);
const OPUS_4 = usd(15, 75, 18.75, 1.5);
const SONNET = usd(3, 15, 3.75, 0.3);
const HAIKU_4_5 = usd(1, 5, 1.25, 0.1);
const HAIKU_3_5 = usd(0.8, 4, 1, 0.08);
const HAIKU_3 = usd(0.25, 1.25, 0.3, 0.03);
// OpenAI bills no cache writes: a write is priced as the input it is.
const openai = (input: number, output: number, cachedInput: number) => usd(input, output, input, cachedInput);

/**
 * The providers' published list prices (USD per million tokens) by model id, aliases and dated
 * snapshots alike. The built-in offline model costs nothing. A model missing here has no list
 * price: a budget cannot measure it, so a budgeted session cannot run it (`model_not_budgetable`).
 */
const LIST_PRICES: ReadonlyMap<string, ListPrice> = new Map([
  ["offline", usd(0, 0, 0, 0)],
  ["claude-opus-4-6", OPUS_4_5],
  ["claude-opus-4-5", OPUS_4_5],
  ["claude-opus-4-5-20251101", OPUS_4_5],
  ["claude-opus-4-1", OPUS_4],
  ["claude-opus-4-1-20250805", OPUS_4],
  ["claude-opus-4-0", OPUS_4],
  ["claude-opus-4-20250514", OPUS_4],
  ["claude-sonnet-4-6", SONNET],
  ["claude-sonnet-4-5", SONNET],
  ["claude-sonnet-4-5-20250929", SONNET],
  ["claude-sonnet-4-0", SONNET],
  ["claude-sonnet-4-20250514", SONNET],
  ["claude-3-7-sonnet-latest", SONNET],
  ["claude-3-7-sonnet-20250219", SONNET],
  ["claude-haiku-4-5", HAIKU_4_5],
  ["claude-haiku-4-5-20251001", HAIKU_4_5],
  ["claude-3-5-haiku-latest", HAIKU_3_5],
  ["claude-3-5-haiku-20241022", HAIKU_3_5],
  ["claude-3-haiku-20240307", HAIKU_3],
  ["gpt-5.2", openai(1.75, 14, 0.175)],
  ["gpt-5.1", openai(1.25, 10, 0.125)],
  ["gpt-5", openai(1.25, 10, 0.125)],
  ["gpt-5-mini", openai(0.25, 2, 0.025)],
  ["gpt-5-nano", openai(0.05, 0.4, 0.005)],
  ["gpt-4.1", openai(2, 8, 0.5)],
  ["gpt-4.1-mini", openai(0.4, 1.6, 0.1)],
  ["gpt-4.1-nano", openai(0.1, 0.4, 0.025)],
  ["gpt-4o", openai(2.5, 10, 1.25)],
  ["gpt-4o-mini", openai(0.15, 0.6, 0.075)],
  ["o4-mini", openai(1.1, 4.4, 0.275)],
  ["o3", openai(2, 8, 0.5)],
  ["o3-mini", openai(1.1, 4.4, 0.55)],
  ["o1", openai(15, 60, 7.5)],
]);

/** The model's list price, or null when it has none (a remote A2A agent, an unknown id). */
export function listPriceOf(model: string): ListPrice | null {
  return LIST_PRICES.get(model) ?? null;
}

/** A request's list cost in nano-cents, or null when its model has no list price. */
export function requestListCost(model: string, tokens: PricedTokens): bigint | null {
  const price = listPriceOf(model);
  if (!price) return null;
  return (
    BigInt(tokens.inputTokens) * BigInt(price.input) +
    BigInt(tokens.outputTokens) * BigInt(price.output) +
    BigInt(tokens.cacheCreationInputTokens) * BigInt(price.cacheWrite) +
    BigInt(tokens.cacheReadInputTokens) * BigInt(price.cacheRead)
  );
}

const NANO_CENTS_PER_CENT = 1_000_000_000n;

/** Nano-cents as whole cents, any fraction rounded up (the cost shown and compared with a budget). */
export function wholeCents(nanoCents: bigint): bigint {
  return (nanoCents + NANO_CENTS_PER_CENT - 1n) / NANO_CENTS_PER_CENT;
}

/** The wire's `BetaMonetaryAmount` for whole cents: minor units as a decimal string, USD. */
export function monetaryAmount(cents: bigint): { amount: string; currency: "USD" } {
  return { amount: cents.toString(), currency: "USD" };
}
