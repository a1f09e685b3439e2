import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../src/kernel/boundedCache.js";

describe("BoundedCache", () => {
  it("evicts the least recently used entry past maxEntries; a read counts as a use", () => {
    const cache = new BoundedCache<string, number>({ maxEntries: 2 });
    cache.set("a", 1).set("b", 2);
    expect(cache.get("a")).toBe(1);
    cache.set("c", 3);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(1);
    expect(cache.get("c")).toBe(3);
    expect(cache.size).toBe(2);
  });

  it("a spray of new keys never grows it past the bound", () => {
    const cache = new BoundedCache<number, number>({ maxEntries: 100 });
    for (let i = 0; i < 10_000; i++) cache.set(i, i);
    expect(cache.size).toBe(100);
    expect(cache.get(9_999)).toBe(9_999);
    expect(cache.get(0)).toBeUndefined();
  });

  it("entries past their time to live on the injected clock read as absent", () => {
    let now = 0;
    const cache = new BoundedCache<string, string | null>({
      maxEntries: 10,
      ttlMs: 1_000,
      clock: { now: () => now },
    });
    cache.set("refused", null);
    now = 999;
    expect(cache.get("refused")).toBeNull();
    expect(cache.has("refused")).toBe(true);
    now = 1_000;
    expect(cache.get("refused")).toBeUndefined();
    expect(cache.has("refused")).toBe(false);
    expect(cache.size).toBe(0);
  });

  it("add remembers a key once and does not refresh it; deleteWhere drops matching values", () => {
    const cache = new BoundedCache<string, { owner: string }>({ maxEntries: 2 });
    expect(cache.add("k1", { owner: "x" })).toBe(true);
    expect(cache.add("k1", { owner: "y" })).toBe(false);
    cache.add("k2", { owner: "y" });
    cache.add("k3", { owner: "x" });
    // k1 was the oldest insertion: add does not count as a use.
    expect(cache.has("k1")).toBe(false);
    cache.deleteWhere((value) => value.owner === "x");
    expect(cache.has("k3")).toBe(false);
    expect(cache.has("k2")).toBe(true);
  });

  it("refuses a bound that is not a positive integer", () => {
    expect(() => new BoundedCache({ maxEntries: 0 })).toThrow(/maxEntries must be a positive integer/);
  });
});
