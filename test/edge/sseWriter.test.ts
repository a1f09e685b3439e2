/**
 * The one SSE writer every streaming edge writes through, on a stand-in response whose socket
 * buffer the test fills and drains by hand, and on a clock the test advances: a full buffer pauses the
 * producer until `drain`, heartbeats go out only on an idle connection, and a close ends the waits
 * and the heartbeat.
 */
import { EventEmitter } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import { SseWriter } from "../../src/edge/http/sseWriter.js";
import { SteppedClock } from "../support/steppedClock.js";

/** A response whose socket takes `room` bytes before `write` returns false; `drain()` empties it. */
class StandInResponse extends EventEmitter {
  readonly chunks: string[] = [];
  writableLength = 0;
  writableEnded = false;
  destroyed = false;
  constructor(private readonly room: number) {
    super();
  }
  write(chunk: string | Uint8Array): boolean {
    this.chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    this.writableLength += chunk.length;
    return this.writableLength < this.room;
  }
  end(chunk?: string): void {
    if (chunk !== undefined) this.chunks.push(chunk);
    this.writableEnded = true;
  }
  drain(): void {
    this.writableLength = 0;
    this.emit("drain");
  }
  hangUp(): void {
    this.destroyed = true;
    this.emit("close");
  }
}

const log = { error: () => {} } as unknown as FastifyBaseLogger;

function open(room: number, options: { signal?: AbortSignal } = {}) {
  const raw = new StandInResponse(room);
  const clock = new SteppedClock();
  const writer = new SseWriter(
    { raw: raw as unknown as ServerResponse, log },
    { hook: "test stream", heartbeat: { frame: ": ping\n\n", everyMs: 1_000 }, clock, ...options },
  );
  return { raw, clock, writer };
}

/** Whether `promise` settled by now (after the microtasks already queued ran). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

describe("SseWriter", () => {
  it("resolves a write at once while the socket takes it, and only on drain once it is full", async () => {
    const { raw, writer } = open(10);
    expect(await settled(writer.write("data: a\n\n"))).toBe(true);
    const full = writer.write("data: bb\n\n");
    expect(await settled(full)).toBe(false);
    raw.drain();
    expect(await settled(full)).toBe(true);
    expect(raw.chunks).toEqual(["data: a\n\n", "data: bb\n\n"]);
  });

  it("pauses a producer that awaits each write: nothing more is pulled until the socket drains", async () => {
    const { raw, writer } = open(20);
    let pulled = 0;
    // Far more than the socket takes: a producer that is not paused runs through them all.
    async function* frames() {
      while (pulled < 1_000) {
        pulled += 1;
        yield `data: ${pulled}\n\n`;
      }
    }
    const pumping = (async () => {
      for await (const frame of frames()) {
        await writer.write(frame);
        if (writer.closed.aborted) break;
      }
    })();
    await settled(pumping);
    expect(pulled).toBe(3);
    expect(raw.writableLength).toBe(27);
    raw.drain();
    await settled(pumping);
    expect(pulled).toBe(6);
    raw.hangUp();
    await pumping;
    expect(pulled).toBe(6);
  });

  it("sends a heartbeat only while nothing is buffered", async () => {
    const { raw, clock, writer } = open(10);
    await clock.advance(999);
    expect(raw.chunks).toEqual([]);
    await clock.advance(1);
    expect(raw.chunks).toEqual([": ping\n\n"]);
    raw.drain();
    const full = writer.write("data: 0123456789\n\n");
    await clock.advance(2_000);
    expect(raw.chunks).toEqual([": ping\n\n", "data: 0123456789\n\n"]);
    raw.drain();
    await full;
    await clock.advance(1_000);
    expect(raw.chunks.at(-1)).toBe(": ping\n\n");
  });

  it("offers a frame only to an idle connection", () => {
    const { raw, writer } = open(100);
    expect(writer.offer("event: hint\n\n")).toBe(true);
    expect(writer.offer("event: hint\n\n")).toBe(false);
    raw.drain();
    expect(writer.offer("event: hint\n\n")).toBe(true);
    expect(raw.chunks).toEqual(["event: hint\n\n", "event: hint\n\n"]);
  });

  it("a client that hangs up ends the wait, the heartbeat and every later write", async () => {
    const { raw, clock, writer } = open(5);
    const waiting = writer.write("data: stalled\n\n");
    expect(await settled(waiting)).toBe(false);
    raw.hangUp();
    expect(await settled(waiting)).toBe(true);
    expect(writer.closed.aborted).toBe(true);
    expect(clock.pending).toBe(0);
    expect(raw.listenerCount("drain")).toBe(0);
    await writer.write("data: late\n\n");
    expect(raw.chunks).toEqual(["data: stalled\n\n"]);
  });

  it("its signal ends the waits like a close, and end() still says the last word", async () => {
    const stop = new AbortController();
    const { raw, clock, writer } = open(5, { signal: stop.signal });
    const waiting = writer.write("data: stalled\n\n");
    stop.abort();
    expect(await settled(waiting)).toBe(true);
    expect(clock.pending).toBe(0);
    writer.end("data: [DONE]\n\n");
    expect(raw.chunks).toEqual(["data: stalled\n\n", "data: [DONE]\n\n"]);
    expect(raw.writableEnded).toBe(true);
  });

  it("a signal aborted before the writer opened arms no heartbeat", () => {
    const { clock, writer } = open(100, { signal: AbortSignal.abort() });
    expect(writer.closed.aborted).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it("end() stops the heartbeat and writes nothing after", async () => {
    const { raw, clock, writer } = open(100);
    writer.end();
    expect(clock.pending).toBe(0);
    expect(writer.closed.aborted).toBe(true);
    await writer.write("data: late\n\n");
    writer.end("data: twice\n\n");
    expect(raw.chunks).toEqual([]);
  });
});

const EDGE = fileURLToPath(new URL("../../src/edge/", import.meta.url));

describe("edge event streams", () => {
  it("every edge file that answers text/event-stream writes its frames through the one writer", () => {
    const files = readdirSync(EDGE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    // The OpenAPI document names the media type of the streams it describes; it answers none.
    const streams = files.filter(
      (file) =>
        !file.startsWith("openapi/") && readFileSync(join(EDGE, file), "utf8").includes("text/event-stream"),
    );
    expect(streams.length).toBeGreaterThanOrEqual(5);
    const bypassing = streams.filter((file) => {
      const text = readFileSync(join(EDGE, file), "utf8");
      return !text.includes("http/sseWriter.js") || /\braw\.write\(/.test(text);
    });
    expect(bypassing).toEqual([]);
  });
});
