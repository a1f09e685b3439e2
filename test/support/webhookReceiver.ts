import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One POST the receiver took (answered 2xx) or turned away. */
export interface ReceivedPush {
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: raw wire JSON, read field by field in assertions.
  body: any;
  contentType: string;
  answered: number;
  /** The body as it arrived (what a signature covers). */
  raw: string;
  /** The `verify` check's answer (true when the receiver has none). */
  verified: boolean;
}

export interface ReceiverOptions {
  /**
   * Checks each delivery's signature (a standard-webhooks receiver calls the SDK's `unwrap()`):
   * one that throws is answered 400 and never accepted.
   */
  verify?: (raw: string, headers: Record<string, string>) => void;
}

/**
 * A webhook on the loopback, as an A2A client would run one: it records every POST and answers
 * `status` (200, or 503 to play a receiver that is down).
 */
export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<{
  url: string;
  received: ReceivedPush[];
  /** The ones answered 2xx: what the receiver accepted. */
  accepted(): ReceivedPush[];
  /** 200, 503 to play a receiver that is down, or 0 to take requests and never answer them. */
  status: number;
  waitFor(test: (accepted: ReceivedPush[]) => boolean, timeoutMs?: number): Promise<ReceivedPush[]>;
  close(): Promise<void>;
}> {
  const received: ReceivedPush[] = [];
  const state = { status: 200 };
  const server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      text += chunk;
    });
    req.on("end", () => {
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      let verified = true;
      if (options.verify) {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === "string") flat[name] = value;
        }
        try {
          options.verify(text, flat);
        } catch {
          verified = false;
        }
      }
      const answered = verified ? state.status : 400;
      received.push({
        headers: req.headers,
        body,
        contentType: req.headers["content-type"] ?? "",
        answered,
        raw: text,
        verified,
      });
      // Status 0: the request is taken and left unanswered (a receiver hung mid-delivery).
      if (answered !== 0) res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const accepted = () => received.filter((r) => r.answered >= 200 && r.answered < 300);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    accepted,
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
    async waitFor(test, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!test(accepted())) {
        if (Date.now() > deadline) {
          throw new Error(`webhook: condition not met; got ${JSON.stringify(received.map((r) => r.body))}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return accepted();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
