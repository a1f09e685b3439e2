import { Option } from "commander";
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "../edge/http/connectionLimits.js";
import { integer } from "./commandSupport.js";

const D = DEFAULT_CONNECTION_LIMITS;

/** The client connection bounds of every server command (`up`, `coordinator`), each with its env variable. */
export function connectionOptions(): Option[] {
  const option = (flags: string, help: string, env: string, fallback: number, min: number) =>
    new Option(flags, help)
      .env(env)
      .default(fallback)
      .argParser(integer(flags.split(" ")[0]!, min));
  return [
    option(
      "--headers-timeout-ms <ms>",
      "a connection must send its request headers within this, or it is closed (408)",
      "AWAKEN_HEADERS_TIMEOUT_MS",
      D.headersTimeoutMs,
      100,
    ),
    option(
      "--request-timeout-ms <ms>",
      "a request's headers and body must arrive within this (responses, such as event streams, are not cut)",
      "AWAKEN_REQUEST_TIMEOUT_MS",
      D.requestTimeoutMs,
      100,
    ),
    option(
      "--keep-alive-timeout-ms <ms>",
      "an idle kept-alive connection is closed after this; keep it above your proxy's upstream idle timeout",
      "AWAKEN_KEEP_ALIVE_TIMEOUT_MS",
      D.keepAliveTimeoutMs,
      100,
    ),
    option(
      "--max-connections <n>",
      "client connections open at once; more are dropped (keep it under the process's file limit)",
      "AWAKEN_MAX_CONNECTIONS",
      D.maxConnections,
      1,
    ),
    option(
      "--max-connections-per-address <n>",
      "client connections open at once from one address; behind a reverse proxy all clients share its address, so raise it to --max-connections there",
      "AWAKEN_MAX_CONNECTIONS_PER_ADDRESS",
      D.maxConnectionsPerAddress,
      1,
    ),
  ];
}

/** What `connectionOptions` parsed. */
// biome-ignore lint/suspicious/noExplicitAny: commander's parsed options are untyped
export function connectionLimitsFrom(opts: any): ConnectionLimits {
  return {
    headersTimeoutMs: opts.headersTimeoutMs,
    requestTimeoutMs: opts.requestTimeoutMs,
    keepAliveTimeoutMs: opts.keepAliveTimeoutMs,
    maxConnections: opts.maxConnections,
    maxConnectionsPerAddress: opts.maxConnectionsPerAddress,
  };
}
