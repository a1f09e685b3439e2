/**
 * The census's checker finds what a typed client would trip on: a missing required field, a wrong
 * literal, a null where the type has none, a wrong item in a list, a union member's field; and it
 * lets pass what a client never reads (extension fields).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadSdkSurface, type SdkSurface } from "./sdkSurface.js";
import { conformance } from "./typeConformance.js";

let surface: SdkSurface;
beforeAll(() => {
  surface = loadSdkSurface();
}, 60_000);

function check(path: string, value: unknown): string[] {
  const op = surface.operations.find((o) => o.path === path);
  if (!op?.type) throw new Error(`no typed operation ${path}`);
  return conformance(surface.checker, value, op.type);
}

const MODEL = {
  type: "model",
  id: "claude-sonnet-4-6",
  allowed_fallback_models: [],
  display_name: "Claude Sonnet 4.6",
  created_at: "2026-01-01T00:00:00Z",
  capabilities: null,
  deprecated_at: null,
  lifecycle: "active",
  line: null,
  max_input_tokens: null,
  max_tokens: null,
  retires_at: null,
};

describe("type conformance against the SDK's declarations", () => {
  it("passes a conforming value, extension fields included", () => {
    expect(check("beta.models.retrieve", { ...MODEL, provider: "offline" })).toEqual([]);
  });

  it("names each mismatch by its path", () => {
    const { allowed_fallback_models: _, ...missing } = MODEL;
    expect(check("beta.models.retrieve", missing)).toEqual([
      expect.stringMatching(/^\$\.allowed_fallback_models: missing/),
    ]);
    expect(check("beta.models.retrieve", { ...MODEL, lifecycle: "sunset" })).toEqual([
      expect.stringMatching(/^\$\.lifecycle: "sunset" is none of/),
    ]);
    expect(check("beta.models.retrieve", { ...MODEL, display_name: null })).toEqual([
      "$.display_name: expected a string, got null",
    ]);
    expect(check("beta.models.retrieve", { ...MODEL, allowed_fallback_models: ["a", 2] })).toEqual([
      "$.allowed_fallback_models[1]: expected a string, got 2",
    ]);
  });

  it("checks a union member chosen by its type discriminant", () => {
    const errors = check("beta.sessions.events.list", { type: "user.message", id: "sevt_1", content: "no" });
    expect(errors.some((e) => e.startsWith("$.content: expected an array"))).toBe(true);
  });
});
