import { describe, expect, it } from "vitest";
import { actorName, nameBook } from "../../src/console/projection/resourceNames.js";

describe("nameBook", () => {
  it("names agents, environments and keys by id, leaving unnamed ones out", () => {
    const book = nameBook(
      [{ id: "agent_1", name: "planner" }],
      [{ id: "env_1", name: "prod" }],
      [{ id: "key_1", name: null }],
      undefined,
    );
    expect(book.get("agent_1")).toBe("planner");
    expect(book.get("env_1")).toBe("prod");
    expect(book.has("key_1")).toBe(false);
    expect(actorName("key_1", book)).toBe("key_1");
    expect(actorName("agent_1", book)).toBe("planner");
  });
});
