/**
 * The browser test page's own server: it bundles and serves the page, and its `/v1/*` proxy passes
 * requests and streamed responses through unbuffered, so the useChat tests see the server's SSE as
 * it is written. Checked against a small upstream that holds its stream open.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatPageServer, startChatPageServer } from "../support/chatPageServer.js";
import { launchChromium } from "./headlessChromium.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let seen: Seen[] = [];
let release: () => void = () => {};
let upstreamClosed: Promise<void> = Promise.resolve();
const upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    seen.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: String(Buffer.concat(chunks)),
    });
    if (new URL(req.url ?? "/", "http://upstream").pathname === "/v1/held-stream") {
      res.writeHead(200, { "content-type": "text/event-stream", "x-upstream": "yes" });
      res.write('data: {"type":"start"}\n\n');
      upstreamClosed = new Promise((resolve) => res.on("close", () => resolve()));
      release = () => res.end("data: [DONE]\n\n");
      return;
    }
    res.writeHead(401, { "content-type": "text/plain" });
    res.end("upstream says no");
  });
});

let page: ChatPageServer;
let browser: Browser | undefined;
beforeAll(async () => {
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  page = await startChatPageServer(`http://127.0.0.1:${port}`);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await page?.close();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

describe("the /v1 proxy", () => {
  it("forwards the request and streams the response before the upstream finishes it", async () => {
    seen = [];
    const response = await fetch(`${page.url}/v1/held-stream?x=1`, {
      method: "POST",
      headers: { "x-api-key": "the-key", "content-type": "application/json" },
      body: '{"hello":"world"}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("x-upstream")).toBe("yes");
    const reader = response.body!.getReader();
    // The upstream has not ended its response: this chunk only arrives if the proxy does not buffer.
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: {"type":"start"}\n\n');
    release();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("data: [DONE]\n\n");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/v1/held-stream?x=1", body: '{"hello":"world"}' });
    expect(seen[0]!.headers["x-api-key"]).toBe("the-key");
    expect(seen[0]!.headers.host).toBe(`127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  });

  it("a client that goes away closes the upstream stream", async () => {
    const controller = new AbortController();
    const response = await fetch(`${page.url}/v1/held-stream`, { method: "POST", signal: controller.signal });
    await response.body!.getReader().read();
    const closed = upstreamClosed;
    controller.abort();
    await closed;
  });

  it("serves only the page and /v1", async () => {
    const response = await fetch(`${page.url}/etc/passwd`);
    expect(response.status).toBe(404);
  });
});

describe("the page in chromium", () => {
  it("renders its labelled form and shows a failed request as its error line", async () => {
    const context = await browser!.newContext();
    try {
      const tab = await context.newPage();
      const problems: string[] = [];
      tab.on("pageerror", (error) => problems.push(String(error)));
      seen = [];
      await tab.goto(page.pageUrl({ key: "the-key", agent: "agent_1", environment: "env_1" }));
      expect(await tab.getByTestId("status").textContent()).toBe("Status: ready");
      await tab.getByLabel("Message", { exact: true }).fill("hello there");
      await tab.getByRole("button", { name: "Send" }).click();
      await tab.getByRole("alert").waitFor();
      expect(await tab.getByTestId("error").textContent()).toBe("Error: upstream says no");
      expect(await tab.getByTestId("message").getAttribute("data-role")).toBe("user");

      // What DefaultChatTransport sent, with the page's own fields.
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ method: "POST", url: "/v1/ai-sdk/chat" });
      expect(seen[0]!.headers["x-api-key"]).toBe("the-key");
      const body = JSON.parse(seen[0]!.body) as Record<string, unknown>;
      expect(body).toMatchObject({ agentId: "agent_1", environmentId: "env_1", trigger: "submit-message" });
      expect(body.messages).toMatchObject([{ role: "user", parts: [{ type: "text", text: "hello there" }] }]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
