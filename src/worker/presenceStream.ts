import { Client } from "undici";
import { backoffDelayMs } from "../kernel/backoff.js";
import { sleep } from "../kernel/clock.js";
import type { RuntimeLog } from "../runtime/ports.js";
import { PRESENCE_PATH, PRESENCE_SILENCE_MS, type PresenceRequest } from "./presenceWire.js";
import { WORKER_ROUTE_PREFIX } from "./transportWire.js";

export interface PresenceStreamOptions {
  baseUrl: string;
  token: string;
  /** `<worker id>.<incarnation>`. */
  identity: string;
  /** The claims the worker holds now: each hello renews them, so a blip costs no run. */
  held: () => PresenceRequest["held"];
  log: RuntimeLog;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Silence after which the stream is taken for dead (the coordinator writes a newline every 10 s). */
  silenceMs?: number;
  /** Each time a stream opens (the coordinator applied its hello). */
  onOpen?: () => void;
}

/** Statuses that say this coordinator cannot take a presence stream from this worker: no retry. */
const REFUSED = new Set([400, 401, 403, 404]);

/**
 * Holds the presence stream (`presenceWire.ts`) open while the worker runs, reopening it at once
 * after it ends and with doubling backoff while the coordinator is unreachable. Its own connection
 * (not the call pool's), so no call ever waits behind it. Stopping closes it last, after the
 * worker drained: by then the worker holds nothing, and the coordinator's lapse finds nothing.
 */
export class PresenceStream {
  private readonly client: Client;
  private readonly basePath: string;
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;
  /** Whether the stream of the current attempt opened. */
  private opened = false;

  constructor(private readonly options: PresenceStreamOptions) {
    const base = new URL(options.baseUrl);
    this.basePath = base.pathname.replace(/\/+$/, "");
    this.client = new Client(base.origin);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async close(): Promise<void> {
    this.stopped.abort();
    await this.loop;
    await this.client.destroy().catch(() => {});
  }

  private async run(): Promise<void> {
    const base = this.options.retryBaseMs ?? 100;
    const max = this.options.retryMaxMs ?? 5_000;
    // Attempts since the last stream that opened: the first goes at once (a blip's reconnect must
    // land within the coordinator's grace), later ones back off.
    let failures = 0;
    while (!this.stopped.signal.aborted) {
      this.opened = false;
      const outcome = await this.holdOnce().catch((error: unknown) => error);
      if (this.stopped.signal.aborted || outcome === "refused") return;
      if (this.opened) failures = 0;
      if (failures === 1 && outcome !== "ended") {
        this.options.log.warn(
          { error: outcome instanceof Error ? outcome.message : String(outcome) },
          "presence stream lost; reopening (until it is back, a crash of this worker is noticed only when its leases lapse)",
        );
      }
      if (failures > 0)
        await sleep(
          backoffDelayMs({ baseMs: base, maxMs: max, jitter: "none" }, failures),
          this.stopped.signal,
        );
      failures += 1;
    }
  }

  /** One stream, from the hello until it ends ("ended"), is refused ("refused") or fails (throws). */
  private async holdOnce(): Promise<"ended" | "refused"> {
    const hello: PresenceRequest = { identity: this.options.identity, held: this.options.held() };
    const { statusCode, body } = await this.client.request({
      method: "POST",
      path: `${this.basePath}${WORKER_ROUTE_PREFIX}${PRESENCE_PATH}`,
      headers: { authorization: `Bearer ${this.options.token}`, "content-type": "application/json" },
      body: JSON.stringify(hello),
      headersTimeout: this.options.silenceMs ?? PRESENCE_SILENCE_MS,
      bodyTimeout: this.options.silenceMs ?? PRESENCE_SILENCE_MS,
      signal: this.stopped.signal,
    });
    if (statusCode !== 200) {
      const text = (await body.text().catch(() => "")).slice(0, 300);
      if (!REFUSED.has(statusCode)) throw new Error(`coordinator answered ${statusCode}: ${text}`);
      this.options.log.warn(
        { status: statusCode, answer: text },
        "the coordinator takes no presence stream from this worker; if it dies, its runs resume once their leases lapse",
      );
      return "refused";
    }
    for await (const _beat of body) {
      // Newlines only: each says the coordinator is still there; the first, that the hello applied.
      if (!this.opened) {
        this.opened = true;
        this.options.onOpen?.();
      }
    }
    return "ended";
  }
}
