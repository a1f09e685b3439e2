import { expect } from "vitest";
import { AwakenError } from "../../src/kernel/errors.js";

/** Runs `fn`, expects a 400 AwakenError (`invalid`), and returns its message. */
export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AwakenError);
    expect((error as AwakenError).category).toBe("invalid");
    return (error as AwakenError).message;
  }
  throw new Error("expected a refusal");
}
