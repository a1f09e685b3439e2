/**
 * Names a TLS failure with a route's MCP server. Under TLS 1.3 a server that wants a client
 * certificate (mutual TLS) refuses it only after the client's handshake has finished, with an alert
 * the socket reports as an error; undici then fails the request with a bare "other side closed".
 * So the connector's sockets remember their TLS alert (by local address and port, which the
 * request's error carries) and the failure is told as the handshake failure it is.
 */
import type { TLSSocket } from "node:tls";
import { buildConnector } from "undici";

/** Sockets whose TLS alert is remembered at once; older ones are forgotten (no growth). */
const REMEMBERED = 64;

export interface OriginTls {
  /** undici's `connect` for one pool: these TLS options, each socket's alert remembered. */
  connector(options: buildConnector.BuildOptions): buildConnector.connector;
  /** The failure as the MCP client will read it: the TLS or network reason, never a header. */
  explain(error: unknown, presentsCertificate: boolean): string;
}

export function originTls(): OriginTls {
  const alerts = new Map<string, string>();
  const socketKey = (info: { localAddress?: string; localPort?: number } | undefined) =>
    info?.localPort ? `${info.localAddress}|${info.localPort}` : "";
  return {
    connector(options) {
      const base = buildConnector(options);
      return (opts, callback) =>
        base(opts, (error, socket) => {
          if (socket) {
            const key = socketKey(socket as TLSSocket);
            alerts.delete(key); // a port used again: what an earlier socket saw is not this one's
            let first = true;
            socket.on("error", (e: NodeJS.ErrnoException) => {
              if (!key || !first || !isTlsCode(e.code)) return;
              first = false;
              if (alerts.size >= REMEMBERED) alerts.delete(alerts.keys().next().value as string);
              alerts.set(key, e.code);
            });
          }
          (callback as (e: Error | null, s: typeof socket) => void)(error, socket);
        });
    },
    explain(error, presentsCertificate) {
      const cause = (error as { cause?: { code?: string } }).cause;
      let code = (error as { code?: string }).code ?? cause?.code;
      const key = socketKey((error as { socket?: { localAddress?: string; localPort?: number } }).socket);
      // undici's own "other side closed" hides the alert that closed the socket.
      const alert = key && code === "UND_ERR_SOCKET" ? alerts.get(key) : undefined;
      if (alert) {
        alerts.delete(key);
        code = alert;
      }
      const message = error instanceof Error ? error.message : String(error);
      if (!isServerAlert(code)) return code ? `${message} (${code})` : message;
      const why =
        code === "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED" && !presentsCertificate
          ? "it requires a client certificate (mutual TLS): start the connector with --client-cert and --client-key"
          : presentsCertificate
            ? "the MCP server refused it, most likely this connector's client certificate (--client-cert)"
            : "the MCP server refused it (if it requires a client certificate, start the connector with --client-cert and --client-key)";
      return `the TLS handshake with the MCP server failed: ${why} (${code})`;
    },
  };
}

function isTlsCode(code: string | undefined): code is string {
  return typeof code === "string" && /^ERR_(SSL|TLS)_/.test(code);
}

/** An alert the MCP server sent: it ended the handshake (with mutual TLS, over the client's certificate). */
function isServerAlert(code: string | undefined): code is string {
  return typeof code === "string" && /^ERR_SSL_.*ALERT_/.test(code);
}
