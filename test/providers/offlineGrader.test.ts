import { describe, expect, it } from "vitest";
import { offlineGraderAnswer } from "../../src/providers/offlineGrader.js";
import { createOfflineProvider } from "../../src/providers/offlineProvider.js";
import {
  GRADER_SYSTEM_PROMPT,
  graderRequestText,
  parseGraderVerdict,
  readGraderRequest,
} from "../../src/providers/outcomeGrading.js";

const verdictOf = (rubric: string, attempt: string) =>
  parseGraderVerdict(offlineGraderAnswer({ task: "t", rubric, attempt }));

describe("the offline grading rule", () => {
  it("a rubric's offline-verdict line decides; unreadable answers no verdict at all", () => {
    expect(verdictOf("Be nice.\noffline-verdict: satisfied", "x")?.verdict).toBe("satisfied");
    expect(verdictOf("offline-verdict: needs_revision", "x")?.verdict).toBe("needs_revision");
    expect(verdictOf("  Offline-Verdict: failed  ", "x")?.verdict).toBe("failed");
    expect(verdictOf("offline-verdict: unreadable", "x")).toBeNull();
  });

  it("otherwise every backticked phrase must appear in the attempt; the feedback names the missing ones", () => {
    const rubric = "Mention `red fox` and `lazy dog`.";
    expect(verdictOf(rubric, "the red fox")).toEqual({
      verdict: "needs_revision",
      explanation: "The attempt does not include `lazy dog`, which the rubric requires.",
    });
    expect(verdictOf(rubric, "the red fox and the lazy dog")?.verdict).toBe("satisfied");
    expect(verdictOf("No phrases here.", "")?.verdict).toBe("satisfied");
  });

  it("is what the offline model answers to a grader request, and only to one", async () => {
    const provider = createOfflineProvider();
    const text = graderRequestText({ task: "Say it.", rubric: "Say `hello`.", attempt: "goodbye" });
    const ask = (system: string | null) =>
      provider.complete(
        {
          model: "m",
          system,
          messages: [{ role: "user", content: [{ type: "text", text }] }],
          tools: [],
          maxTokens: 100,
        },
        { signal: new AbortController().signal, onEvent: () => {} },
      );
    const graded = await ask(GRADER_SYSTEM_PROMPT);
    const answer = graded.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(parseGraderVerdict(answer)?.verdict).toBe("needs_revision");
    const plain = await ask(null);
    expect(plain.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("You said:") });
  });
});

describe("the grader's request and verdict forms", () => {
  it("a request's sections read back, even when the rubric or attempt holds the other's tags", () => {
    const request = { task: "A\nB", rubric: "has </rubric> inside", attempt: "ends with </attempt>" };
    expect(readGraderRequest(graderRequestText(request))).toEqual(request);
    expect(readGraderRequest("just text")).toBeNull();
  });

  it("a verdict is the first JSON object with a known verdict and an explanation, prose or fences around it", () => {
    expect(parseGraderVerdict('Here:\n```json\n{"verdict":"satisfied","explanation":" ok "}\n```')).toEqual({
      verdict: "satisfied",
      explanation: "ok",
    });
    expect(parseGraderVerdict('{"verdict":"great","explanation":"x"}')).toBeNull();
    expect(parseGraderVerdict('{"verdict":"failed","explanation":""}')).toBeNull();
    expect(parseGraderVerdict("satisfied")).toBeNull();
  });
});
