import { describe, expect, it } from "vitest";
import { toDomainInputs } from "../../src/edge/managed-agents/routes/userInputs.js";
import { AwakenError } from "../../src/kernel/errors.js";

const text = [{ type: "text", text: "x" }];

describe("Managed wire events → domain inputs", () => {
  it("maps each event type, content blocks as given", () => {
    const image = { type: "image", source: { type: "url", url: "https://x/y.png" } };
    expect(
      toDomainInputs([
        { type: "user.message", content: [...text, image] } as never,
        { type: "system.message", content: text } as never,
        { type: "user.interrupt" },
        { type: "user.interrupt", session_thread_id: "sthr_1" } as never,
        { type: "user.tool_confirmation", tool_use_id: "sevt_a", result: "allow" } as never,
        {
          type: "user.tool_confirmation",
          tool_use_id: "sevt_b",
          result: "deny",
          deny_message: "no",
        } as never,
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: "sevt_c",
          content: text,
          is_error: true,
        } as never,
        { type: "user.tool_result", tool_use_id: "sevt_d", content: text, is_error: false } as never,
      ]),
    ).toEqual([
      { kind: "message", content: [...text, image] },
      { kind: "system_message", content: text },
      { kind: "interrupt" },
      { kind: "interrupt", targetThread: "sthr_1" },
      { kind: "tool_confirmation", callId: "sevt_a", allowed: true, denyMessage: null },
      { kind: "tool_confirmation", callId: "sevt_b", allowed: false, denyMessage: "no" },
      { kind: "tool_result", callId: "sevt_c", content: text, isError: true, executor: "client" },
      { kind: "tool_result", callId: "sevt_d", content: text, isError: false, executor: "server" },
    ]);
  });

  it("remembers which optional result fields the client left out", () => {
    expect(
      toDomainInputs([{ type: "user.custom_tool_result", custom_tool_use_id: "sevt_c" } as never]),
    ).toEqual([
      {
        kind: "tool_result",
        callId: "sevt_c",
        content: [],
        isError: false,
        executor: "client",
        unset: ["content", "isError"],
      },
    ]);
  });

  it("maps an outcome's definition with its inline or already-read file rubric", () => {
    const inline = { type: "text", content: "Must rhyme." };
    expect(
      toDomainInputs(
        [
          { type: "user.define_outcome", description: "A poem", rubric: inline } as never,
          {
            type: "user.define_outcome",
            description: "A list",
            rubric: { type: "file", file_id: "file_1" },
            max_iterations: 5,
          } as never,
        ],
        new Map([[1, { content: "Must be sorted.", fileId: "file_1" }]]),
      ),
    ).toEqual([
      {
        kind: "define_outcome",
        description: "A poem",
        rubric: { content: "Must rhyme." },
        maxIterations: null,
      },
      {
        kind: "define_outcome",
        description: "A list",
        rubric: { content: "Must be sorted.", fileId: "file_1" },
        maxIterations: 5,
      },
    ]);
  });

  it("refuses what the product cannot take, with today's messages", () => {
    const refused = (type: string) => {
      try {
        toDomainInputs([{ type, rubric: { type: "file", file_id: "file_1" } } as never]);
      } catch (error) {
        return error;
      }
      return null;
    };
    // A file rubric reaches the mapping already read; one that was not is refused, never guessed.
    expect(refused("user.define_outcome")).toMatchObject({ code: "invalid_request" });
    expect(refused("user.shout")).toBeInstanceOf(AwakenError);
    expect(refused("user.shout")).toMatchObject({ message: 'unknown event type "user.shout"' });
  });
});
