import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { readClientIdentity } from "./clientIdentity.js";
import { TokenRefused, TunnelConnector } from "./tunnelConnector.js";

const TOKEN_ENV = "AWAKEN_TUNNEL_TOKEN";
const ROUTES_ENV = "AWAKEN_TUNNEL_ROUTES";
const URL_ENV = "AWAKEN_COORDINATOR_URL";

const HELP = `
Runs inside a private network and carries the MCP traffic of agents whose MCP server URL is in
the tunnel's domain (https://ROUTE.<tunnel domain>/path): it dials OUT to the coordinator over one
long-lived connection, authenticates with the tunnel token, and makes each request to the route's
MCP server here, over TLS that must chain to the tunnel's CA certificates (and nothing else).

The allow-list: only the routes given here exist. A request names a route; its host and port come
from this list, never from the request, so the connector is no open proxy into this network.
Routes are HTTPS origins (no path, no credentials). Redirects are not followed.

Mutual TLS: an MCP server that requires the client to present a certificate gets the one given
with --client-cert FILE (PEM, leaf first, then any intermediates) and --client-key FILE (PEM,
unencrypted; the file must be readable by its owner only: chmod 600). Both or neither. It is the
identity of this connector, one for all its routes (a server that asks for none is sent none;
servers that need different identities go through different tunnels, one connector each). Both files are read once at start; they never leave this host: the coordinator and its
database never see them. The MCP server is still verified against the tunnel's CA certificates only.

The token: --token-file, ${TOKEN_ENV}, or --token (visible to other users of this host in the
process list: prefer the other two). It is never printed. A token the coordinator refuses
(rotated, or its tunnel archived) stops the connector with exit code 2; a dropped connection is
dialled again, backing off up to 30 s.

Environment:
  ${TOKEN_ENV}     the tunnel token (when neither --token nor --token-file is given)
  ${URL_ENV}  used when --coordinator-url is not given
  ${ROUTES_ENV}    comma-separated routes, used when no --route is given

Example:
  ${TOKEN_ENV}=… awaken tunnel --coordinator-url https://awaken.example.com \\
    --route crm=https://crm-mcp.internal:8443 --route docs=https://10.0.4.7:9443 \\
    --client-cert /etc/awaken/connector.crt --client-key /etc/awaken/connector.key
  # an agent then names https://crm.<tunnel domain>/mcp as its MCP server URL
`;

/** One `name=https://host:port` route: a DNS-style name and an HTTPS origin. */
export function parseRoute(text: string): [string, URL] {
  const at = text.indexOf("=");
  const name = text.slice(0, at).trim().toLowerCase();
  const target = text.slice(at + 1).trim();
  if (at <= 0 || !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(name)) {
    throw new InvalidArgumentError(`route "${text}": expected name=https://host:port with a DNS-style name`);
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new InvalidArgumentError(`route "${text}": ${target} is not a URL`);
  }
  if (url.protocol !== "https:")
    throw new InvalidArgumentError(`route "${text}": the MCP server must be https`);
  if (
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    (url.pathname !== "/" && url.pathname !== "")
  ) {
    throw new InvalidArgumentError(`route "${text}": give an origin only (no path, query or credentials)`);
  }
  return [name, url];
}

function collectRoute(text: string, previous: Array<[string, URL]> = []): Array<[string, URL]> {
  return [...previous, parseRoute(text)];
}

function tokenFrom(opts: { token?: string; tokenFile?: string }): string {
  const token = opts.tokenFile
    ? readFileSync(opts.tokenFile, "utf8").trim()
    : (opts.token ?? process.env[TOKEN_ENV]);
  if (!token) throw new Error(`no tunnel token: give --token-file, ${TOKEN_ENV} or --token`);
  return token.trim();
}

/** `awaken tunnel`: the connector of one MCP tunnel. */
export function tunnelCommand(): Command {
  return new Command("tunnel")
    .description(
      "Carry an MCP tunnel's traffic from inside a private network (dials out to the coordinator).",
    )
    .addOption(new Option("--coordinator-url <url>", "the coordinator's base URL").env(URL_ENV))
    .addOption(new Option("--token <token>", `the tunnel token (prefer --token-file or ${TOKEN_ENV})`))
    .addOption(new Option("--token-file <path>", "a file holding the tunnel token"))
    .addOption(
      new Option("--route <name=https://host:port>", "a route this connector serves (repeatable)").argParser(
        collectRoute,
      ),
    )
    .addOption(
      new Option("--coordinator-ca <path>", "a CA certificate (PEM) to trust the coordinator's HTTPS with"),
    )
    .addOption(
      new Option("--client-cert <path>", "a client certificate (PEM) to present to MCP servers (mutual TLS)"),
    )
    .addOption(new Option("--client-key <path>", "the client certificate's private key (PEM, mode 600)"))
    .addHelpText("after", HELP)
    .action(async (opts) => {
      const fail = (message: string, code = 1) => {
        process.stderr.write(`awaken tunnel: ${message}\n`);
        process.exitCode = code;
      };
      let connector: TunnelConnector;
      try {
        if (!opts.coordinatorUrl) throw new Error(`--coordinator-url (or ${URL_ENV}) is required`);
        const coordinatorUrl = new URL(opts.coordinatorUrl);
        if (coordinatorUrl.protocol !== "http:" && coordinatorUrl.protocol !== "https:") {
          throw new Error("--coordinator-url must be http or https");
        }
        const listed: Array<[string, URL]> =
          opts.route ??
          (process.env[ROUTES_ENV] ?? "")
            .split(",")
            .map((r) => r.trim())
            .filter((r) => r !== "")
            .map(parseRoute);
        if (listed.length === 0) throw new Error(`give at least one --route (or ${ROUTES_ENV})`);
        connector = new TunnelConnector({
          coordinatorUrl,
          token: tokenFrom(opts),
          routes: new Map(listed),
          coordinatorCa: opts.coordinatorCa ? readFileSync(opts.coordinatorCa, "utf8") : undefined,
          clientIdentity: readClientIdentity(opts.clientCert, opts.clientKey),
          log: (line) => process.stdout.write(`${line}\n`),
        });
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
        return;
      }
      const stop = () => void connector.stop();
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
      try {
        await connector.run();
      } catch (error) {
        if (error instanceof TokenRefused) fail(error.message, 2);
        else throw error;
      } finally {
        await connector.stop();
        process.off("SIGTERM", stop);
        process.off("SIGINT", stop);
      }
    });
}
