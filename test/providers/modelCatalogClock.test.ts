import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModelCatalog } from "../../src/providers/modelCatalog.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { ManualClock } from "../support/storeFixtures.js";

// A provider's model list is read once per five minutes, measured on the catalog's clock: a test
// moves the clock instead of waiting for the list to go stale.

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(() => fake.close());

describe("the model catalog on an injected clock", () => {
  it("reuses a provider's list until five minutes have passed on the clock", async () => {
    const clock = new ManualClock();
    const catalog = createModelCatalog({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url }, clock);
    const ids = async () => (await catalog.list()).filter((m) => m.provider === "anthropic").map((m) => m.id);
    fake.setModels(["claude-first"]);
    expect(await ids()).toEqual(["claude-first"]);
    fake.setModels(["claude-second"]);
    clock.advance(5 * 60_000 - 1);
    expect(await ids()).toEqual(["claude-first"]);
    clock.advance(1);
    expect(await ids()).toEqual(["claude-second"]);
  });
});
