/**
 * Checks a sandbox's `serveLocal`: a host server answering each line with "host heard <line>", and
 * a process spawned in the sandbox running the returned bridge, talking to it over its stdio.
 */
import { statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import type { Sandbox } from "../../src/sandbox/ports.js";

export interface LocalSocketProbe {
  /** What the bridged process printed for one line sent (with egress: the bridge's dir is bound). */
  roundTrip(egress: boolean): Promise<{ code: number | null; out: string }>;
  /** The socket's mode and owner on the host. */
  socketStat(): { mode: number; uid: number };
  close(): Promise<void>;
}

export async function probeLocalSocket(sandbox: Sandbox): Promise<LocalSocketProbe> {
  const server: Server = createServer((socket) => {
    socket.setEncoding("utf8");
    let buffered = "";
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
        socket.write(`host heard ${buffered.slice(0, at)}\n`);
        buffered = buffered.slice(at + 1);
      }
    });
    socket.on("end", () => socket.end());
    socket.on("error", () => socket.destroy());
  });
  const name = "probe-test.sock";
  const argv = await sandbox.serveLocal!(name, server);
  return {
    async roundTrip(egress) {
      const child = await sandbox.spawn({
        argv,
        env: {},
        maxStderrBytes: 1_024,
        signal: new AbortController().signal,
        egress,
      });
      const chunks: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      child.stdin.end("ping\n");
      return { code: await child.exited, out: Buffer.concat(chunks).toString("utf8") };
    },
    socketStat() {
      // A unix socket server's address is its path.
      const stat = statSync(server.address() as string);
      return { mode: stat.mode & 0o777, uid: stat.uid };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
