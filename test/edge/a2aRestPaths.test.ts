import { describe, expect, it } from "vitest";
import { restRouteOf } from "../../src/edge/a2a/restPaths.js";

describe("the HTTP+JSON binding's paths", () => {
  it("reads each operation with its verb, decoding ids", () => {
    expect(restRouteOf("POST", "/message:send")?.operation).toEqual({ op: "send" });
    expect(restRouteOf("POST", "/message:stream")?.operation).toEqual({ op: "stream" });
    expect(restRouteOf("GET", "/tasks")?.operation).toEqual({ op: "listTasks" });
    expect(restRouteOf("GET", "/tasks/sesn_1.sevt_2")?.operation).toEqual({
      op: "getTask",
      taskId: "sesn_1.sevt_2",
    });
    expect(restRouteOf("POST", "/tasks/a%3Ab:cancel")?.operation).toEqual({
      op: "cancelTask",
      taskId: "a:b",
    });
    expect(restRouteOf("GET", "/tasks/t:subscribe")?.operation).toEqual({ op: "subscribe", taskId: "t" });
    expect(restRouteOf("POST", "/tasks/t:subscribe")?.operation).toEqual({ op: "subscribe", taskId: "t" });
    expect(restRouteOf("POST", "/tasks/t/pushNotificationConfigs")?.operation).toEqual({
      op: "createPushConfig",
      taskId: "t",
    });
    expect(restRouteOf("DELETE", "/tasks/t/pushNotificationConfigs/c%2F1")?.operation).toEqual({
      op: "deletePushConfig",
      taskId: "t",
      configId: "c/1",
    });
    expect(restRouteOf("GET", "/extendedAgentCard")?.operation).toEqual({ op: "extendedCard" });
  });

  it("knows the verbs a path takes, and no other paths", () => {
    expect(restRouteOf("GET", "/message:send")).toEqual({ allowed: ["POST"], operation: null });
    expect(restRouteOf("DELETE", "/tasks/t")).toEqual({ allowed: ["GET"], operation: null });
    for (const path of [
      "",
      "/",
      "/message",
      "/message:send/extra",
      "/tasks/",
      "/tasks/:cancel",
      "/tasks/t:cancel:again",
      "/tasks/t:explode",
      "/tasks/%E0%A4%A",
      "/tasks/t/other",
      "/tasks/t/pushNotificationConfigs/",
      "/tasks/t/pushNotificationConfigs/c/d",
    ]) {
      expect(restRouteOf("GET", path), path).toBeNull();
    }
  });
});
