/**
 * A fake OpenAI chat completions API speaking the real streaming wire on POST /v1/chat/completions
 * (`data: {chunk}` lines, tool call argument fragments, a final usage chunk, `data: [DONE]`).
 */
import type { ServerResponse } from "node:http";
import {
  delay,
  estimateTokens,
  type FakeModelServer,
  isRecord,
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

const DEFAULT_ERRORS: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  404: { type: "invalid_request_error", code: "model_not_found" },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
};

export function startFakeOpenAI(): Promise<FakeModelServer> {
  return startFakeModelServer({
    path: "/v1/chat/completions",
    urlSuffix: "/v1",
    modelsPath: "/v1/models",
    // OpenAI's list is one page, every model the key can use (chat or not).
    writeModels(res, ids) {
      sendJson(res, 200, {
        object: "list",
        data: ids.map((id, i) => ({
          id,
          object: "model",
          created: 1_767_225_600 - i * 86_400,
          owned_by: "fake",
        })),
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
  if (reply.kind === "error") {
    const fallback = DEFAULT_ERRORS[reply.status] ?? { type: "server_error", code: null };
    const type = reply.errorType ?? fallback.type;
    res.setHeader("x-request-id", `req_fake_${serial}`);
    sendJson(res, reply.status, {
      error: { message: reply.message ?? `fake ${type}`, type, param: null, code: fallback.code },
    });
    return;
  }

  const chunks = new ChunkWriter(res, body, serial);
  startEventStream(res, { "x-request-id": `req_fake_${serial}` });
  chunks.delta({ role: "assistant", content: "", refusal: null });

  switch (reply.kind) {
    case "hang":
      await untilClosed(res);
      return;
    case "drop":
      await chunks.text(reply.text ?? "partial answer", 0);
      // Give the partial chunks time to reach the client before the connection dies.
      await delay(20);
      res.destroy();
      return;
    case "stream_error":
      await chunks.text(reply.text ?? "partial answer", 0);
      chunks.raw({
        error: { message: reply.message ?? "fake stream failure", type: reply.errorType ?? "server_error" },
      });
      res.end();
      return;
    case "text":
      await reply.heldUntil;
      if (reply.thinking) chunks.reasoning(reply.thinking);
      await chunks.text(reply.text, reply.chunkDelayMs ?? 0);
      chunks.finish(reply.stopReason === "max_tokens" ? "length" : "stop", reply.usage, reply.text);
      return;
    case "tool_use": {
      if (reply.thinking) chunks.reasoning(reply.thinking);
      if (reply.text) await chunks.text(reply.text, 0);
      const calls = [{ name: reply.name, input: reply.input, id: reply.id }, ...(reply.more ?? [])];
      let produced = reply.text ?? "";
      for (const [index, call] of calls.entries()) {
        const args = JSON.stringify(call.input);
        produced += args;
        const id =
          ("id" in call && call.id) || (index === 0 ? `call_fake_${serial}` : `call_fake_${serial}_${index}`);
        chunks.delta({
          tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }],
        });
        for (const fragment of jsonFragments(args)) {
          chunks.delta({ tool_calls: [{ index, function: { arguments: fragment } }] });
        }
      }
      chunks.finish("tool_calls", reply.usage, produced);
      return;
    }
  }
}

class ChunkWriter {
  private readonly includeUsage: boolean;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly res: ServerResponse,
    private readonly body: Record<string, unknown>,
    private readonly serial: number,
  ) {
    this.includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  }

  raw(data: unknown): void {
    if (!this.res.destroyed) this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  delta(delta: Record<string, unknown>, finishReason: string | null = null): void {
    this.raw(this.chunk([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]));
  }

  async text(text: string, chunkDelayMs: number): Promise<void> {
    for (const piece of textChunks(text)) {
      if (chunkDelayMs > 0) await delay(chunkDelayMs);
      if (this.res.destroyed) return;
      this.delta({ content: piece });
    }
  }

  /** Reasoning as OpenAI-compatible servers stream it (the official API sends none). */
  reasoning(text: string): void {
    for (const piece of textChunks(text)) this.delta({ reasoning_content: piece });
  }

  finish(finishReason: string, usage: ScriptedUsage | undefined, produced: string): void {
    this.delta({}, finishReason);
    if (this.includeUsage) {
      const promptTokens = usage?.input_tokens ?? estimateTokens(this.body.messages);
      const completionTokens = usage?.output_tokens ?? Math.max(1, Math.ceil(produced.length / 4));
      // With include_usage the real API adds one last chunk with no choices and the totals.
      this.raw({
        ...this.chunk([]),
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
          prompt_tokens_details: { cached_tokens: usage?.cache_read_input_tokens ?? 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
        },
      });
    }
    if (!this.res.destroyed) this.res.write("data: [DONE]\n\n");
    this.res.end();
  }

  private chunk(choices: unknown[]): Record<string, unknown> {
    const chunk: Record<string, unknown> = {
      id: `chatcmpl-fake-${this.serial}`,
      object: "chat.completion.chunk",
      created: this.created,
      model: typeof this.body.model === "string" ? this.body.model : "gpt-fake",
      system_fingerprint: "fp_fake",
      choices,
    };
    // Every chunk carries `usage: null` when usage was requested, as the real API does.
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }
}
