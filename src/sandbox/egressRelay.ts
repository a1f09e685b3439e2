import { EGRESS_SANDBOX_DIR, EGRESS_SOCKET_NAME } from "./egressProxy.js";
import { launcherBashArgs } from "./launcherShell.js";
import { PERL_PUMP } from "./perlPump.js";
import { ENVIRONMENT_PREAMBLE, PREAMBLE_NAME } from "./processEnvironment.js";

/**
 * The egress relay of a process spawned in a sandbox of its own (a harness that must reach its
 * model): 127.0.0.1:3128 on that sandbox's loopback, each connection relayed to the host egress
 * proxy's unix socket, as the live sandbox's supervisor does for commands. Perl's core builtins
 * only (perl-base is wherever bwrap is). It binds first and then detaches, so the process it runs
 * before never finds the port closed; it dies with the sandbox's PID namespace.
 */
const RELAY = `
use strict;
my $SOCK = $ARGV[0];
my ($AF_UNIX, $AF_INET, $SOCK_STREAM, $SOL_SOCKET, $SO_REUSEADDR) = (1, 2, 1, 1, 2);
socket(my $l, $AF_INET, $SOCK_STREAM, 0) or die "egress relay: socket: $!\\n";
setsockopt($l, $SOL_SOCKET, $SO_REUSEADDR, pack('l', 1));
bind($l, pack('S n C4 x8', $AF_INET, 3128, 127, 0, 0, 1)) or die "egress relay: bind 127.0.0.1:3128: $!\\n";
listen($l, 128) or die "egress relay: listen: $!\\n";
my $pid = fork;
die "egress relay: fork: $!\\n" unless defined $pid;
exit 0 if $pid;
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
$SIG{CHLD} = 'IGNORE';
$SIG{PIPE} = 'IGNORE';
${PERL_PUMP}
while (1) {
  accept(my $c, $l) or next;
  my $child = fork;
  if (!defined $child || $child) { close($c); next }
  close($l);
  socket(my $u, $AF_UNIX, $SOCK_STREAM, 0) or exit 0;
  connect($u, pack('S Z108', $AF_UNIX, $SOCK)) or exit 0;
  my $down = fork;
  exit 0 unless defined $down;
  if ($down == 0) { pump($u, $c); shutdown($c, 1); exit 0 }
  pump($c, $u);
  shutdown($u, 1);
  waitpid($down, 0);
  exit 0;
}
`;

/**
 * The argv that starts the relay to the egress proxy's socket (where every tier binds it), then
 * runs `argv` behind the environment preamble (processEnvironment.ts): the relay is bound before
 * the process starts, and a relay that cannot start stops the process before it runs (exit 125).
 */
export function relayedPreambleArgv(
  host: { bashPath: string; perlPath: string },
  argv: readonly string[],
): string[] {
  const script = `"$1" -e "$2" -- "$3" || exit 125; shift 3; ${ENVIRONMENT_PREAMBLE}`;
  return [
    host.bashPath,
    ...launcherBashArgs(script, PREAMBLE_NAME),
    host.perlPath,
    RELAY,
    `${EGRESS_SANDBOX_DIR}/${EGRESS_SOCKET_NAME}`,
    ...argv,
  ];
}
