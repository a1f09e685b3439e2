/**
 * A fake Anthropic Messages API speaking the real streaming wire on POST /v1/messages, so the
 * official SDK (and anything built on it) can be exercised without network access.
 */
import type { ServerResponse } from "node:http";
import {
  delay,
  estimateTokens,
  type FakeModelServer,
  jsonFragments,
  lastUserTextOf,
  type ScriptedReply,
  type ScriptedUsage,
  sendJson,
  startEventStream,
  startFakeModelServer,
  textChunks,
  untilClosed,
} from "./fakeModelScript.js";

const DEFAULT_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

export function startFakeAnthropic(): Promise<FakeModelServer> {
  return startFakeModelServer({
    path: "/v1/messages",
    urlSuffix: "",
    modelsPath: "/v1/models",
    // Anthropic's list pages by `after_id` and `limit`, newest first, as the SDK's `Page` reads it.
    writeModels(res, ids, query) {
      const after = query.get("after_id");
      const start = after === null ? 0 : ids.indexOf(after) + 1;
      const limit = Number(query.get("limit") ?? 20);
      const page = ids.slice(start, start + limit);
      sendJson(res, 200, {
        data: page.map((id, i) => ({
          type: "model",
          id,
          display_name: `Fake ${id}`,
          created_at: new Date(Date.UTC(2026, 0, 1) - (start + i) * 86_400_000).toISOString(),
          max_input_tokens: 200_000,
          max_tokens: 64_000,
        })),
        has_more: start + limit < ids.length,
        first_id: page[0] ?? null,
        last_id: page.at(-1) ?? null,
      });
    },
    lastUserText: (body) => lastUserTextOf(body.messages),
    write: writeReply,
  });
}

async function writeReply(
  res: ServerResponse,
  reply: ScriptedReply,
  body: Record<string, unknown>,
  serial: number,
): Promise<void> {
  const requestId = `req_fake_${serial}`;
  if (reply.kind === "error") {
    const type = reply.errorType ?? DEFAULT_ERROR_TYPES[reply.status] ?? "api_error";
    res.setHeader("request-id", requestId);
    sendJson(res, reply.status, { type: "error", error: { type, message: reply.message ?? `fake ${type}` } });
    return;
  }

  const sse = new SseWriter(res);
  startEventStream(res, { "request-id": requestId });
  const usage = "usage" in reply ? reply.usage : undefined;
  const inputTokens = usage?.input_tokens ?? estimateTokens(body.messages);
  sse.send("message_start", {
    type: "message_start",
    message: {
      id: `msg_fake_${serial}`,
      type: "message",
      role: "assistant",
      model: typeof body.model === "string" ? body.model : "claude-fake",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        output_tokens: 1,
        cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
      },
    },
  });

  switch (reply.kind) {
    case "hang":
      await untilClosed(res);
      return;
    case "drop":
      await sse.textBlock(0, reply.text ?? "partial answer", 0);
      // Give the partial events time to reach the client before the connection dies.
      await delay(20);
      res.destroy();
      return;
    case "stream_error": {
      await sse.textBlock(0, reply.text ?? "partial answer", 0);
      const type = reply.errorType ?? "overloaded_error";
      sse.send("error", { type: "error", error: { type, message: reply.message ?? "Overloaded" } });
      res.end();
      return;
    }
    case "text": {
      await reply.heldUntil;
      const index = reply.thinking ? sse.thinkingBlock(0, reply.thinking) : 0;
      await sse.textBlock(index, reply.text, reply.chunkDelayMs ?? 0);
      sse.finish(reply.stopReason ?? "end_turn", outputTokens(usage, reply.text));
      return;
    }
    case "tool_use": {
      let index = reply.thinking ? sse.thinkingBlock(0, reply.thinking) : 0;
      if (reply.text) await sse.textBlock(index++, reply.text, 0);
      const calls = [{ name: reply.name, input: reply.input, id: reply.id }, ...(reply.more ?? [])];
      let produced = reply.text ?? "";
      for (const [n, call] of calls.entries()) {
        const input = JSON.stringify(call.input);
        produced += input;
        sse.send("content_block_start", {
          type: "content_block_start",
          index,
          content_block: {
            type: "tool_use",
            id: ("id" in call && call.id) || `toolu_fake_${serial}_${n}`,
            name: call.name,
            input: {},
          },
        });
        // The real API opens every tool input with an empty fragment.
        for (const partial of ["", ...jsonFragments(input)]) {
          sse.send("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: partial },
          });
        }
        sse.send("content_block_stop", { type: "content_block_stop", index });
        index += 1;
      }
      sse.finish("tool_use", outputTokens(usage, produced));
      return;
    }
  }
}

function outputTokens(usage: ScriptedUsage | undefined, produced: string): number {
  return usage?.output_tokens ?? Math.max(1, Math.ceil(produced.length / 4));
}

class SseWriter {
  private pinged = false;

  constructor(private readonly res: ServerResponse) {}

  send(event: string, data: unknown): void {
    if (!this.res.destroyed) this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  async textBlock(index: number, text: string, chunkDelayMs: number): Promise<void> {
    this.send("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "text", text: "" },
    });
    // The real API sends its first ping right after the first block opens.
    if (!this.pinged) {
      this.pinged = true;
      this.send("ping", { type: "ping" });
    }
    for (const chunk of textChunks(text)) {
      if (chunkDelayMs > 0) await delay(chunkDelayMs);
      if (this.res.destroyed) return;
      this.send("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: chunk },
      });
    }
    this.send("content_block_stop", { type: "content_block_stop", index });
  }

  /** A thinking block at `index`; returns the next block's index. */
  thinkingBlock(index: number, thinking: string): number {
    this.send("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
    for (const chunk of textChunks(thinking)) {
      this.send("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "thinking_delta", thinking: chunk },
      });
    }
    this.send("content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "signature_delta", signature: "fake-signature" },
    });
    this.send("content_block_stop", { type: "content_block_stop", index });
    return index + 1;
  }

  finish(stopReason: string, outputTokens: number): void {
    this.send("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    });
    this.send("message_stop", { type: "message_stop" });
    this.res.end();
  }
}
