import { type Dispatcher, Pool } from "undici";

export interface PostAnswer {
  status: number;
  text: string;
}

/**
 * JSON POSTs to one coordinator over kept-alive connections, through undici's `Pool.dispatch`
 * with a handler that collects the answer's bytes. A remote worker makes a few calls per turn
 * (claims, commits, evidence) and the HTTP client is most of what it spends on them: `fetch`
 * (web streams) and `node:http` (a request and a response stream object per call) cost more per
 * call than this (measured with bench/turns.mjs --topologies pg-remote, CPU per process).
 * The answer is read whole: every worker route answers one small JSON document.
 */
export class HttpPoster {
  private readonly pool: Pool;
  /** The base URL's own path (a coordinator behind a path prefix), without a trailing slash. */
  private readonly basePath: string;

  constructor(baseUrl: string) {
    const base = new URL(baseUrl);
    this.basePath = base.pathname.replace(/\/+$/, "");
    // No cap on connections: every idle slot holds one in a long-poll claim.
    this.pool = new Pool(base.origin, { connections: null });
  }

  /**
   * POSTs `body` to `path` under the base URL. Rejects on a connection error, or when the answer's
   * headers, or a pause inside its body, take longer than `timeoutMs`.
   */
  post(path: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<PostAnswer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      const handler: Dispatcher.DispatchHandler = {
        // Its presence marks the handler as one of the current API (undici adapts the older one).
        onRequestStart: () => {},
        onResponseStart: (_controller, statusCode) => {
          status = statusCode;
        },
        onResponseData: (_controller, chunk) => {
          chunks.push(chunk);
        },
        onResponseEnd: () => {
          resolve({ status, text: Buffer.concat(chunks).toString("utf8") });
        },
        onResponseError: (_controller, error) => reject(error),
      };
      this.pool.dispatch(
        {
          method: "POST",
          path: `${this.basePath}${path}`,
          headers,
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        handler,
      );
    });
  }

  /** Closes the kept-alive connections; calls still in flight fail. */
  close(): void {
    this.pool.destroy().catch(() => {});
  }
}
