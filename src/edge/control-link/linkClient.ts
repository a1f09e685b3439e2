import { AwakenError } from "../../kernel/errors.js";
import { decodeError, decodeResult, encodeArgs } from "./linkCodec.js";
import { LINK_ROUTE_PREFIX } from "./linkServices.js";

export interface LinkClientOptions {
  /**
   * The peer's base URL (`http://control:4100`), or several replicas' (comma-separated): a call
   * goes to the first that answers, so one replica down is not an outage. Paths are kept.
   */
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
  private readonly bases: string[];
  private readonly authorization: string;
  /** The replica that answered last: tried first next time. */
  private preferred = 0;

  constructor(private readonly options: LinkClientOptions) {
    this.bases = options.baseUrl.split(",").map((entry) => {
      const url = new URL(entry.trim());
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new Error(`${options.peer}'s URL must be http:// or https://, not ${url.protocol}`);
      }
      return url.toString().replace(/\/+$/, "");
    });
    this.authorization = `Bearer ${options.token}`;
  }

  async call(service: string, method: string, args: readonly unknown[]): Promise<unknown> {
    const body = encodeArgs(args);
    let response: Response | null = null;
    let failure: unknown = null;
    // Only a connection that was never made moves on to the next replica; any answer is the answer.
    for (let tried = 0; tried < this.bases.length && response === null; tried += 1) {
      const index = (this.preferred + tried) % this.bases.length;
      try {
        response = await fetch(`${this.bases[index]}${LINK_ROUTE_PREFIX}/${service}/${method}`, {
          method: "POST",
          headers: { authorization: this.authorization, "content-type": "application/json" },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
        this.preferred = index;
      } catch (error) {
        failure = error;
        // A call that may have reached the peer (a timeout, a reset) is never sent twice.
        if (!neverConnected(error)) break;
      }
    }
    if (response === null) {
      throw new AwakenError(
        "unavailable",
        `${this.options.peer} could not be reached (${describe(failure)}).`,
        {
          retryable: true,
        },
      );
    }
    const answer: unknown = await response.json().catch(() => null);
    if (!response.ok) throw decodeError(answer, response.status);
    return decodeResult(answer);
  }

  /** True when some replica answers its `/readyz` with 200 within `timeoutMs` (for readiness). */
  async ready(timeoutMs: number): Promise<boolean> {
    for (const base of this.bases) {
      try {
        const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
        await response.body?.cancel();
        if (response.ok) return true;
      } catch {
        // this replica is down or slow: ask the next
      }
    }
    return false;
  }

  /** An object whose methods are the peer's `methods` of `service`. */
  service<T, const M extends readonly string[]>(service: string, methods: M): Linked<T, M> {
    const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const method of methods) out[method] = (...args) => this.call(service, method, args);
    return out as Linked<T, M>;
  }
}

const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/** The request never left this process: another replica may take it. */
function neverConnected(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | null)?.cause?.code;
  return code !== undefined && NOT_CONNECTED.has(code);
}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "timed out";
  const cause = (error as { cause?: { code?: string } } | null)?.cause?.code;
  return cause ?? (error instanceof Error ? error.message : String(error));
}
