import type { UserInput } from "../../../coordinator/inputRules.js";
import type { JsonObject } from "../../../kernel/json.js";

/** Wire event params → domain inputs: the type stays, every other field becomes the fact body. */
export function toUserInputs(events: ReadonlyArray<{ type: string }>): UserInput[] {
  return events.map((event) => {
    const { type, ...rest } = event as { type: string } & Record<string, unknown>;
    const body: JsonObject = {};
    for (const [key, value] of Object.entries(rest)) {
      // Optional fields sent as null carry no information; keep facts free of them.
      if (value !== undefined && value !== null) body[key] = value as JsonObject[string];
    }
    return { type, body };
  });
}
