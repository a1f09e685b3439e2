import http from "node:http";
import https from "node:https";

export interface PostAnswer {
  status: number;
  text: string;
}

/**
 * JSON POSTs to one coordinator over kept-alive connections, with node:http rather than `fetch`.
 * A remote worker makes a dozen calls per turn (claims, reads, commits, renewals, evidence); on
 * `fetch` (undici and its web streams) those cost the worker more CPU than the rest of the turn's
 * work (measured with bench/turns.mjs --topologies pg-remote and a CPU profile of the workers).
 * The answer is read whole: every worker route answers one small JSON document.
 */
export class HttpPoster {
  private readonly agent: http.Agent;
  private readonly send: typeof http.request;

  constructor(baseUrl: string) {
    const secure = new URL(baseUrl).protocol === "https:";
    // Idle sockets are unref'd by the agent, so a kept-alive connection never holds the process.
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.send = secure ? https.request : http.request;
  }

  /** Rejects on a connection error or when `timeoutMs` passes before the whole answer arrived. */
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<PostAnswer> {
    return new Promise((resolve, reject) => {
      const request = this.send(
        url,
        {
          method: "POST",
          agent: this.agent,
          headers: { ...headers, "content-length": Buffer.byteLength(body) },
          signal: AbortSignal.timeout(timeoutMs),
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", reject);
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}
