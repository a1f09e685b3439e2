import { chmod, chown } from "node:fs/promises";
import type { Server } from "node:net";
import { join } from "node:path";
import { EGRESS_SANDBOX_DIR, EGRESS_SOCKET_NAME } from "./egressProxy.js";
import { PERL_PUMP } from "./perlPump.js";
import type { HostOwner } from "./sandboxWorkspace.js";

/** A socket name in the sandbox's private directory: plain, short, never the egress proxy's own. */
const LOCAL_SOCKET_NAME = /^[a-z0-9][a-z0-9-]{0,40}\.sock$/;

/**
 * A process inside speaking to a host socket on its stdin and stdout, for programs that only start
 * stdio servers (a harness's MCP servers). Perl's core builtins only, as the egress relay: perl-base
 * is wherever bwrap is, and in every image the container tier runs.
 */
const BRIDGE = `
use strict;
my ($AF_UNIX, $SOCK_STREAM) = (1, 1);
socket(my $u, $AF_UNIX, $SOCK_STREAM, 0) or die "awaken socket bridge: socket: $!\\n";
connect($u, pack('S Z108', $AF_UNIX, $ARGV[0])) or die "awaken socket bridge: connect $ARGV[0]: $!\\n";
$SIG{PIPE} = 'IGNORE';
${PERL_PUMP}
my $pid = fork;
die "awaken socket bridge: fork: $!\\n" unless defined $pid;
if ($pid == 0) { pump($u, \\*STDOUT); exit 0 }
pump(\\*STDIN, $u);
shutdown($u, 1);
waitpid($pid, 0);
`;

/**
 * Serves `server` on a unix socket in a sandbox's private directory (the one bound read-only at
 * `EGRESS_SANDBOX_DIR`, enterable by the sandbox's uid only), so nothing listens on a network;
 * returns the argv that reaches it from inside (a process's stdio bridged to the socket).
 */
export async function serveInPrivateDirectory(
  server: Server,
  hostDirectory: string,
  name: string,
  owner: HostOwner | null,
  perlPath: string,
): Promise<string[]> {
  if (!LOCAL_SOCKET_NAME.test(name) || name === EGRESS_SOCKET_NAME)
    throw new Error(`not a local socket name: ${JSON.stringify(name)}`);
  const hostPath = join(hostDirectory, name);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(hostPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(hostPath, 0o600);
  if (owner) await chown(hostPath, owner.uid, owner.gid);
  return [perlPath, "-e", BRIDGE, "--", `${EGRESS_SANDBOX_DIR}/${name}`];
}
