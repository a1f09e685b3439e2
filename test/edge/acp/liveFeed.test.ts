/**
 * The ACP adapter's follower of a session's events: what a dropped stream missed is read back from
 * the committed history, nothing is shown twice, and previews pass through.
 */
import { describe, expect, it } from "vitest";
import { followSession } from "../../../src/edge/acp/liveFeed.js";
import type { ServerSessions, WireEvent } from "../../../src/edge/acp/serverSessions.js";

const ev = (id: string, type = "agent.message"): WireEvent => ({ id, type });

async function* items(list: WireEvent[], fail = false): AsyncGenerator<WireEvent> {
  for (const item of list) yield item;
  if (fail) throw new Error("connection reset");
}

function api(streams: Array<AsyncIterable<WireEvent>>, committed: WireEvent[]): ServerSessions {
  return {
    stream: async () => {
      const next = streams.shift();
      if (!next) throw new Error("no more streams");
      return next;
    },
    history: () => items(committed),
  } as unknown as ServerSessions;
}

async function collect(feed: AsyncIterable<WireEvent>, until: string): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of feed) {
    seen.push(event.type === "event_delta" ? `delta:${event.id}` : event.id);
    if (event.id === until) break;
  }
  return seen;
}

describe("followSession", () => {
  it("skips what precedes the posted event, then shows each event once across a reconnect", async () => {
    const first = items(
      [ev("old"), ev("echo", "user.message"), ev("a"), ev("p", "event_delta"), ev("b")],
      true,
    );
    const second = items([ev("c"), ev("d")]);
    const committed = [ev("old"), ev("echo", "user.message"), ev("a"), ev("b"), ev("c")];
    const stop = new AbortController();
    const feed = followSession(api([second], committed), "sesn_x", first, "echo", stop.signal);
    expect(await collect(feed, "d")).toEqual(["a", "delta:p", "b", "c", "d"]);
  });

  it("gives up after repeated failures instead of spinning", async () => {
    const broken = () => items([], true);
    const stop = new AbortController();
    const streams = Array.from({ length: 10 }, broken);
    const feed = followSession(api(streams, [ev("echo")]), "sesn_x", broken(), "echo", stop.signal);
    await expect(collect(feed, "never")).rejects.toThrow("connection reset");
  }, 20_000);
});
