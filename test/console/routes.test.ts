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

describe("the Console's home and admin routes", () => {
  it("opens on the overview; the sessions, audit and API keys have their own paths", () => {
    expect(routeOf("")).toEqual({ page: "overview" });
    expect(routeOf("overview")).toEqual({ page: "overview" });
    expect(routeOf("sessions")).toEqual({ page: "sessions" });
    expect(routeOf("audit")).toEqual({ page: "audit" });
    expect(routeOf("api-keys")).toEqual({ page: "api-keys" });
    expect(routeOf("api-keys/x")).toMatchObject({ page: "not_found" });
    expect(routeOf("webhooks")).toEqual({ page: "webhooks" });
    expect(routeOf("webhooks/x")).toMatchObject({ page: "not_found" });
  });
});

describe("the deployment routes", () => {
  it("lists deployments; a deployment's page shows its runs", () => {
    expect(routeOf("deployments")).toEqual({ page: "deployments" });
    expect(routeOf("deployments/depl_1")).toEqual({ page: "deployment", deploymentId: "depl_1" });
    expect(routeOf("deployments/depl_1/runs")).toMatchObject({ page: "not_found" });
  });
});

describe("the environment and image build routes", () => {
  it("an environment has its page; the builds page may name the build to open", () => {
    expect(routeOf("environments/env_1")).toEqual({ page: "environment", environmentId: "env_1" });
    expect(routeOf("environments/env_1/x")).toMatchObject({ page: "not_found" });
    expect(routeOf("builds")).toEqual({ page: "builds" });
    expect(routeOf("builds/imgbuild_1")).toEqual({ page: "builds", buildId: "imgbuild_1" });
    expect(routeOf("builds/imgbuild_1/log")).toMatchObject({ page: "not_found" });
  });
});
