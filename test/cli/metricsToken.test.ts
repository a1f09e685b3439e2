import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { metricsTokenFrom } from "../../src/cli/metricsToken.js";
import { createControlHttpServer } from "../../src/edge/control-link/controlHttpServer.js";
import type { LinkServices } from "../../src/edge/control-link/linkServices.js";
import { startWorkerMetricsServer } from "../../src/edge/workerMetricsServer.js";
import { createPrometheusMetrics } from "../../src/observability/prometheusMetrics.js";

describe("the metrics token", () => {
  it("is read from AWAKEN_METRICS_TOKEN; unset or empty leaves /metrics open; a short one is refused", () => {
    expect(metricsTokenFrom({})).toBeUndefined();
    expect(metricsTokenFrom({ AWAKEN_METRICS_TOKEN: "" })).toBeUndefined();
    expect(metricsTokenFrom({ AWAKEN_METRICS_TOKEN: "0123456789abcdef" })).toBe("0123456789abcdef");
    expect(() => metricsTokenFrom({ AWAKEN_METRICS_TOKEN: "short" })).toThrow(
      /AWAKEN_METRICS_TOKEN must be at least 16 characters/,
    );
  });

  it("guards a worker's own /metrics the same way", async () => {
    const token = randomBytes(16).toString("hex");
    const server = await startWorkerMetricsServer(
      { host: "127.0.0.1", port: 0 },
      createPrometheusMetrics(),
      token,
    );
    try {
      const anonymous = await fetch(server.url);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.text()).not.toContain("process_cpu");
      const scraped = await fetch(server.url, { headers: { authorization: `Bearer ${token}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain("process_cpu_user_seconds_total");
    } finally {
      await server.close();
    }
  });

  it("guards Control's own /metrics the same way", async () => {
    const token = randomBytes(16).toString("hex");
    const app = createControlHttpServer({
      logger: pino({ level: "silent" }),
      isReady: () => true,
      readiness: async () => ({
        ready: true,
        draining: false,
        checks: { database: "ok", migrations: "current", workers: "none" },
      }),
      metrics: createPrometheusMetrics(),
      metricsToken: token,
      link: { token: randomBytes(16).toString("hex"), services: {} as LinkServices },
    });
    try {
      expect((await app.inject({ url: "/metrics" })).statusCode).toBe(401);
      const scraped = await app.inject({ url: "/metrics", headers: { authorization: `Bearer ${token}` } });
      expect(scraped.statusCode).toBe(200);
      expect(scraped.body).toContain("process_cpu_user_seconds_total");
    } finally {
      await app.close();
    }
  });
});
