import { createServer } from "node:net";

/**
 * Fails when `host:port` cannot be listened on, with what to do instead. Start-up asks before it
 * creates anything (data dir, keys, database), so a busy port leaves no half-made data dir behind.
 * Port 0 (any free port) always succeeds; the real listen still reports a port taken in between.
 */
export async function assertCanListen(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      reject(new Error(listenAdvice(where, error), { cause: error }));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

function listenAdvice(where: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "EADDRINUSE":
      return `${where} is already in use (another awaken up, or another program): stop it, or pass --port <another port> (--port 0 picks a free one)`;
    case "EACCES":
      return `not allowed to listen on ${where}: use a port above 1023, or pass --port <another port>`;
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return `cannot listen on ${where}: ${error.code === "ENOTFOUND" ? "the host name does not resolve" : "the address is not one of this machine's"}; pass --host <address> (127.0.0.1, or 0.0.0.0 for every interface)`;
    default:
      return `cannot listen on ${where}: ${error.message}`;
  }
}
