import { connect } from "node:net";

export interface SocketResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `request` byte for byte to the server and reads until it closes or one full response
 * (by content-length) has arrived: for requests no HTTP client would send (malformed lines, bad
 * lengths, oversized headers).
 */
export function sendRawHttp(url: string, request: string | Buffer): Promise<SocketResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      const parsed = parseResponse(Buffer.concat(chunks).toString("utf8"));
      if (!parsed) return;
      settled = true;
      socket.destroy();
      resolve(parsed);
    };
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      finish();
    });
    socket.on("error", (error) => {
      if (!settled) finish();
      if (!settled) reject(error);
    });
    socket.on("close", () => {
      finish();
      if (!settled) reject(new Error(`connection closed without a full response: ${Buffer.concat(chunks)}`));
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error("no response within 10 s")));
    socket.write(request);
  });
}

function parseResponse(text: string): SocketResponse | null {
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return null;
  const [statusLine = "", ...lines] = text.slice(0, split).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(split + 4);
  const length = Number(headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(length) && Buffer.byteLength(body) < length) return null;
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}
