import { describe, expect, it } from "vitest";
import { parseRoute, tunnelCommand } from "../../src/cli/tunnelCommand.js";

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

describe("awaken tunnel --help", () => {
  it("explains mutual TLS: the two options, both or neither, the key file's mode, where the key stays", () => {
    let text = "";
    const command = tunnelCommand()
      .configureHelp({ helpWidth: 400 })
      .configureOutput({ writeOut: (s) => (text += s) });
    command.outputHelp();
    expect(text).toContain("--client-cert <path>");
    expect(text).toContain("--client-key <path>");
    expect(text).toMatch(/Mutual TLS: an MCP server that requires the client to present a certificate/);
    expect(text).toContain("Both or neither");
    expect(text).toContain("chmod 600");
    expect(text).toMatch(/they never leave this host: the coordinator and its\s+database never see them/);
    expect(text).toMatch(/still verified against the tunnel's CA certificates only/);
  });
});
