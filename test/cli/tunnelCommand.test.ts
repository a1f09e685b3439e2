import { describe, expect, it } from "vitest";
import { parseRoute } from "../../src/cli/tunnelCommand.js";

describe("awaken tunnel --route (the connector's allow-list)", () => {
  it("takes a DNS-style name and an HTTPS origin", () => {
    const [name, url] = parseRoute("Docs=https://10.0.4.7:9443");
    expect(name).toBe("docs");
    expect(url.origin).toBe("https://10.0.4.7:9443");
    expect(parseRoute("crm.eu=https://crm-mcp.internal/")[1].origin).toBe("https://crm-mcp.internal");
  });

  it("refuses anything else: plain HTTP, a path, credentials, a query, a bad name", () => {
    for (const [route, message] of [
      ["docs=http://10.0.4.7", /must be https/],
      ["docs=https://host/mcp", /origin only/],
      ["docs=https://u:p@host", /origin only/],
      ["docs=https://host?x=1", /origin only/],
      ["=https://host", /DNS-style name/],
      ["do_cs=https://host", /DNS-style name/],
      ["docs", /DNS-style name/],
      ["docs=not a url", /is not a URL/],
    ] as const) {
      expect(() => parseRoute(route), route).toThrow(message);
    }
  });
});
