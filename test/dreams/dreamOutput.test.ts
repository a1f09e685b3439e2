/**
 * The dreamer's answer is checked before anything is written: JSON with a `memories` list, valid
 * paths used once, none below another, sizes and counts within the memory limits; reasons never
 * quote the answer. The offline dreamer's rule is deterministic and its answer passes the check.
 */
import { describe, expect, it } from "vitest";
import { checkDreamOutput } from "../../src/dreams/dreamOutput.js";
import { dreamRequestText, readDreamRequest } from "../../src/providers/dreaming.js";
import { offlineDreamAnswer } from "../../src/providers/offlineDreamer.js";

const LIMITS = { maxContentBytes: 16, maxMemoriesPerStore: 3 };
const answer = (memories: unknown) => JSON.stringify({ memories });

describe("the dreamer's answer", () => {
  it("accepts a JSON list of memories, with prose or a code fence around it", () => {
    const text = `Sure:\n\`\`\`json\n${answer([{ path: "/a.md", content: "x" }])}\n\`\`\``;
    expect(checkDreamOutput(text, LIMITS)).toEqual({ ok: true, memories: [{ path: "/a.md", content: "x" }] });
  });

  it.each([
    ["no JSON", "I dreamt of secrets: hunter2", /not a JSON object/],
    ["a bad item", answer([{ path: "/a.md" }]), /not a JSON object/],
    ["a bad path", answer([{ path: "a.md", content: "hunter2" }]), /must start with \//],
    [
      "a repeated path",
      answer([
        { path: "/a.md", content: "" },
        { path: "/a.md", content: "" },
      ]),
      /repeats/,
    ],
    [
      "a path below another",
      answer([
        { path: "/a", content: "" },
        { path: "/a/b.md", content: "" },
      ]),
      /below/,
    ],
    ["too large a memory", answer([{ path: "/a.md", content: "x".repeat(17) }]), /17 bytes/],
    [
      "too many memories",
      answer(["/a", "/b", "/c", "/d"].map((path) => ({ path, content: "" }))),
      /at most 3/,
    ],
  ])("refuses %s without quoting it", (_, text, reason) => {
    const checked = checkDreamOutput(text, LIMITS);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.error.type).toBe("invalid_output");
    expect(checked.error.message).toMatch(reason);
    expect(checked.error.message).not.toContain("hunter2");
  });
});

describe("the offline dreamer", () => {
  const request = {
    instructions: null,
    memories: [
      { path: "/z.md", content: "same" },
      { path: "/b.md", content: "same" },
    ],
    sessions: [{ id: "sesn_1", transcript: [{ role: "user" as const, text: "hi" }] }],
  };

  it("keeps the memories, adds one per session, merges identical ones and sorts by path", () => {
    const parsed = readDreamRequest(dreamRequestText(request));
    expect(parsed).toEqual(request);
    const checked = checkDreamOutput(offlineDreamAnswer(parsed!), {
      maxContentBytes: 1024,
      maxMemoriesPerStore: 10,
    });
    expect(checked).toEqual({
      ok: true,
      memories: [
        { path: "/b.md", content: "same" },
        { path: "/sessions/sesn_1.md", content: "user: hi" },
      ],
    });
  });

  it("answers prose when told to (an unusable answer)", () => {
    const checked = checkDreamOutput(
      offlineDreamAnswer({ ...request, instructions: "offline-dream: invalid" }),
      LIMITS,
    );
    expect(checked.ok).toBe(false);
  });
});
