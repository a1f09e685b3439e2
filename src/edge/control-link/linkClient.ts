import { AwakenError } from "../../kernel/errors.js";
import { decodeError, decodeResult, encodeArgs } from "./linkCodec.js";
import { LINK_ROUTE_PREFIX } from "./linkServices.js";

export interface LinkClientOptions {
  /** The peer's base URL (`http://control:4100`); its path, if any, is kept. */
  baseUrl: string;
  /** AWAKEN_CONTROL_TOKEN, the same on both sides. */
  token: string;
  /** How long one call may take before it is an `unavailable` error (default 30 s). */
  timeoutMs?: number;
  /** Who is called, for error messages ("Control", "the Coordinator"). */
  peer: string;
}

/** The methods of `T` named in `M`, each returning its result as a promise. */
export type Linked<T, M extends readonly string[]> = {
  [K in M[number] & keyof T]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/**
 * Calls the peer's allow-listed methods over HTTP. A peer that cannot be reached, or answers
 * without a usable error, is `unavailable` and retryable: the caller's own retry rules apply (a
 * publication stays durable and its registration is retried; a public request answers 503).
 */
export class LinkClient {
  private readonly base: string;
  private readonly authorization: string;

  constructor(private readonly options: LinkClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`${options.peer}'s URL must be http:// or https://, not ${url.protocol}`);
    }
    this.base = url.toString().replace(/\/+$/, "");
    this.authorization = `Bearer ${options.token}`;
  }

  async call(service: string, method: string, args: readonly unknown[]): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${LINK_ROUTE_PREFIX}/${service}/${method}`, {
        method: "POST",
        headers: { authorization: this.authorization, "content-type": "application/json" },
        body: encodeArgs(args),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new AwakenError(
        "unavailable",
        `${this.options.peer} could not be reached (${describe(error)}).`,
        {
          retryable: true,
        },
      );
    }
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) throw decodeError(body, response.status);
    return decodeResult(body);
  }

  /** An object whose methods are the peer's `methods` of `service`. */
  service<T, const M extends readonly string[]>(service: string, methods: M): Linked<T, M> {
    const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const method of methods) out[method] = (...args) => this.call(service, method, args);
    return out as Linked<T, M>;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "timed out";
  const cause = (error as { cause?: { code?: string } } | null)?.cause?.code;
  return cause ?? (error instanceof Error ? error.message : String(error));
}
