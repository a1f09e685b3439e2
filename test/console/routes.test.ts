import { describe, expect, it } from "vitest";
import { routeOf } from "../../src/console/routes.js";

describe("the session routes", () => {
  it("a session's page shows its primary thread; its thread path shows that thread", () => {
    expect(routeOf("sessions/sesn_1")).toEqual({ page: "session", sessionId: "sesn_1" });
    expect(routeOf("sessions/sesn_1/threads/sthr_2")).toEqual({
      page: "session",
      sessionId: "sesn_1",
      threadId: "sthr_2",
    });
    expect(routeOf("sessions/sesn_1/threads")).toMatchObject({ page: "not_found" });
  });
});
