/** The token `GET /metrics` requires (of `awaken up`, `coordinator`, `control` and `worker --metrics-port`). */
export const METRICS_TOKEN_ENV = "AWAKEN_METRICS_TOKEN";
const MIN_METRICS_TOKEN_LENGTH = 16;

/**
 * The metrics token from the environment (never a flag: a command line is readable by every
 * local user); unset or empty, `/metrics` is open. A short one is refused at start-up.
 */
export function metricsTokenFrom(env: NodeJS.ProcessEnv): string | undefined {
  const token = env[METRICS_TOKEN_ENV];
  if (token === undefined || token === "") return undefined;
  if (token.length < MIN_METRICS_TOKEN_LENGTH)
    throw new Error(`${METRICS_TOKEN_ENV} must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`);
  return token;
}
