/** The server the key commands talk to when neither --url nor AWAKEN_URL says. */
export const DEFAULT_SERVER_URL = "http://127.0.0.1:4600";

/**
 * One call of the server's HTTP API with `AWAKEN_API_KEY`, for the CLI's management commands; a
 * non-2xx answer becomes an error naming the server's message.
 */
export async function callServer(
  baseUrl: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const apiKey = process.env.AWAKEN_API_KEY;
  if (!apiKey)
    throw new Error("AWAKEN_API_KEY is not set: export the server's API key (awaken up prints it)");
  const base = (baseUrl ?? process.env.AWAKEN_URL ?? DEFAULT_SERVER_URL).replace(/\/+$/, "");
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    throw new Error(`cannot reach ${base}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: reported as is below
  }
  if (!response.ok) {
    const message = (parsed as { error?: { message?: string } })?.error?.message ?? text;
    throw new Error(`${response.status} from ${base}: ${message}`);
  }
  return parsed;
}
