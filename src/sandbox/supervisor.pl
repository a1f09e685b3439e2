#!/usr/bin/perl
# The supervisor a live bwrap sandbox runs as its command (supervisor.ts reads this file and hands
# it to `perl -e`). Core language only: perl-base is an essential Debian package, so /usr/bin/perl
# is there wherever bwrap is; it starts in ~3 ms and idles in ~5 MB, against ~45 MB for Node.
#
# Arguments: clock_gettime's and prctl's syscall numbers (per architecture, from supervisor.ts),
# then optionally the egress proxy's unix socket ('' for none) and the working directory of the
# commands (default /workspace; the behaviour tests run it over a scratch directory).
#
# It reads newline-delimited JSON requests on its stdin and answers on its stdout; strings travel
# hex-encoded, so the requests are parsed with fixed patterns and never need a JSON library.
#
# host -> supervisor
#   {"op":"exec","id":N,"timeoutMs":N,"maxOutputBytes":N,"argv":["<hex>",...],"stdin":"<hex>"}
#   {"op":"kill","id":N}                       abort that command
# supervisor -> host
#   {"op":"ready","pid":N}                     once, when it is listening
#   {"op":"accepted","id":N}                   before it forks: from here on the command may run
#   {"op":"data","id":N,"fd":1|2,"hex":"..."}  output, at most maxOutputBytes in all
#   {"op":"exit","id":N,"code":N|null,"signal":N|null,"timedOut":0|1,"aborted":0|1,"truncated":0|1}
#   {"op":"exit","id":N,"error":"..."}         the command could not be started
#
# Per request it runs the argv as the leader of a new process group, in the working directory,
# with the environment bwrap gave the supervisor, feeds it the stdin, and forwards its output.
# When the leader exits, times out or is aborted, it kills the group and then every other process
# of the sandbox but itself and bwrap's init (`kill(-1)` spares both), until none is left: nothing
# a command started outlives it. It then empties /tmp and /dev/shm and removes POSIX message
# queues and System V IPC objects. It must therefore only ever run inside a PID, mount and IPC
# namespace of its own: on a host, kill(-1) and the tidying would reach the host's.
#
# With a proxy socket it also listens on 127.0.0.1:3128, the sandbox's own loopback, and relays
# each connection to that socket, in its select loop while a command runs (non-blocking both
# ways). When the command ends its connections are closed with it.
#
# It makes itself non-dumpable: a command (same uid) can still kill it (the host then restarts
# the sandbox), but cannot read or write its memory or descriptors through /proc.
use strict;
my ($NR_CLOCK_GETTIME, $NR_PRCTL) = map { 0 + $_ } @ARGV[0, 1];
my $PROXY_SOCKET = $ARGV[2] // '';
my $WORKDIR = length($ARGV[3] // '') ? $ARGV[3] : '/workspace';
@ARGV = ();
$0 = 'supervisor';
# Nothing may depend on the directory it was started from: the tmpfs over /tmp can hide it, and
# File::Path then removes nothing (it cannot find its way back to the starting directory).
chdir('/') or die "supervisor: chdir /: $!\n";
syscall($NR_PRCTL, 4, 0, 0, 0, 0) == 0 or die "supervisor: prctl(PR_SET_DUMPABLE): $!\n";
my ($EINTR, $EAGAIN, $WNOHANG, $F_GETFL, $F_SETFL, $O_NONBLOCK) = (4, 11, 1, 3, 4, 2048);
my $CHUNK = 65536;

sub now {
  my $ts = "\0" x 16;
  syscall($NR_CLOCK_GETTIME, 1, $ts) == 0 or die "supervisor: clock_gettime: $!\n";
  my ($s, $ns) = unpack('q q', $ts);
  return $s + $ns / 1e9;
}
sub retry { my $e = $! + 0; return $e == $EINTR || $e == $EAGAIN }

pipe(my $wake_r, my $wake_w) or die "supervisor: pipe: $!\n";
my $flags = fcntl($wake_w, $F_GETFL, 0) or die "supervisor: fcntl: $!\n";
fcntl($wake_w, $F_SETFL, $flags | $O_NONBLOCK) or die "supervisor: fcntl: $!\n";
$SIG{CHLD} = sub { syswrite($wake_w, 'c') };
$SIG{PIPE} = 'IGNORE';

sub send_line {
  my $line = "$_[0]\n";
  while (length $line) {
    my $n = syswrite(STDOUT, $line);
    if (!defined $n) { next if retry(); exit 0 }
    substr($line, 0, $n, '');
  }
}

# Egress: 127.0.0.1:3128 on the sandbox's own loopback, each connection relayed to the host
# proxy's unix socket (egressProxy.ts). Served only while a command runs; what is left of its
# connections when it ends is closed with it.
my $listener;
my @relays;
# Perl's socket builtins, no module (Socket alone adds ~10 ms to every start); the constants are
# Linux's on x86_64 and aarch64 alike. Every descriptor they open is close-on-exec.
my ($AF_UNIX, $AF_INET, $SOCK_STREAM, $SOL_SOCKET, $SO_REUSEADDR) = (1, 2, 1, 1, 2);
sub nonblocking {
  my $fl = fcntl($_[0], $F_GETFL, 0);
  fcntl($_[0], $F_SETFL, $fl | $O_NONBLOCK) if defined $fl;
}
if (length $PROXY_SOCKET) {
  socket($listener, $AF_INET, $SOCK_STREAM, 0) or die "supervisor: socket: $!\n";
  setsockopt($listener, $SOL_SOCKET, $SO_REUSEADDR, pack('l', 1));
  bind($listener, pack('S n C4 x8', $AF_INET, 3128, 127, 0, 0, 1)) or die "supervisor: bind 127.0.0.1:3128: $!\n";
  listen($listener, 128) or die "supervisor: listen: $!\n";
  nonblocking($listener);
}

sub accept_relays {
  while (accept(my $client, $listener)) {
    my $upstream;
    if (!(socket($upstream, $AF_UNIX, $SOCK_STREAM, 0) && connect($upstream, pack('S Z108', $AF_UNIX, $PROXY_SOCKET)))) {
      close($client);
      next;
    }
    nonblocking($_) for $client, $upstream;
    my $up = { from => $client, to => $upstream, buf => '', eof => 0 };
    my $down = { from => $upstream, to => $client, buf => '', eof => 0 };
    push @relays, [$up, $down];
  }
}

sub close_relays {
  for my $relay (@relays) { close($_->{from}) for @$relay }
  @relays = ();
  return unless $listener;
  while (accept(my $client, $listener)) { close($client) }
}

sub relay_select {
  my ($rin, $win) = @_;
  for my $relay (@relays) {
    for my $dir (@$relay) {
      if (length $dir->{buf}) { vec($$win, fileno($dir->{to}), 1) = 1 }
      elsif (!$dir->{eof}) { vec($$rin, fileno($dir->{from}), 1) = 1 }
    }
  }
  vec($$rin, fileno($listener), 1) = 1 if $listener;
}

sub relay_step {
  my ($rout, $wout) = @_;
  accept_relays() if $listener && vec($rout, fileno($listener), 1);
  my @kept;
  RELAY: for my $relay (@relays) {
    for my $dir (@$relay) {
      if (length $dir->{buf} && vec($wout, fileno($dir->{to}), 1)) {
        my $n = syswrite($dir->{to}, $dir->{buf});
        if (!defined $n) { next if retry(); close($_->{from}) for @$relay; next RELAY }
        substr($dir->{buf}, 0, $n, '');
        shutdown($dir->{to}, 1) if $dir->{eof} && !length $dir->{buf};
      } elsif (!length $dir->{buf} && !$dir->{eof} && vec($rout, fileno($dir->{from}), 1)) {
        my $n = sysread($dir->{from}, $dir->{buf}, $CHUNK);
        if (!defined $n) { next if retry(); close($_->{from}) for @$relay; next RELAY }
        if ($n == 0) { $dir->{eof} = 1; shutdown($dir->{to}, 1) }
      }
    }
    if ($relay->[0]{eof} && $relay->[1]{eof} && !length($relay->[0]{buf}) && !length($relay->[1]{buf})) {
      close($_->{from}) for @$relay;
      next RELAY;
    }
    push @kept, $relay;
  }
  @relays = @kept;
}

my $inbuf = '';
my $scanned = 0;
my @pending;
my $control_open = 1;
sub read_control {
  my $n = sysread(STDIN, $inbuf, 1 << 20, length $inbuf);
  if (!defined $n) { return if retry(); $n = 0 }
  if ($n == 0) { $control_open = 0; return }
  while ((my $at = index($inbuf, "\n", $scanned)) >= 0) {
    push @pending, substr($inbuf, 0, $at);
    substr($inbuf, 0, $at + 1, '');
    $scanned = 0;
  }
  $scanned = length $inbuf;
}

my %reaped;
sub reap { while ((my $pid = waitpid(-1, $WNOHANG)) > 0) { $reaped{$pid} = $? } }

sub sweep {
  my ($pgid) = @_;
  kill('KILL', -$pgid) if $pgid;
  my $until = now() + 2;
  while (1) {
    reap();
    last if kill('KILL', -1) == 0;
    last if now() > $until;
    select(undef, undef, undef, 0.001);
  }
  reap();
}

sub tidy {
  for my $dir ('/tmp', '/dev/shm', '/dev/mqueue') {
    opendir(my $dh, $dir) or next;
    my @entries = grep { $_ ne '.' && $_ ne '..' } readdir($dh);
    closedir($dh);
    next unless @entries;
    require File::Path;
    File::Path::remove_tree(map { "$dir/$_" } @entries);
  }
  for my $kind ('shm', 'msg', 'sem') {
    open(my $fh, '<', "/proc/sysvipc/$kind") or next;
    my $header = <$fh>;
    while (my $line = <$fh>) {
      my (undef, $id) = split(' ', $line);
      next unless defined $id && $id =~ /^\d+$/;
      if ($kind eq 'shm') { shmctl($id, 0, 0) }
      elsif ($kind eq 'msg') { msgctl($id, 0, 0) }
      else { semctl($id, 0, 0, 0) }
    }
    close($fh);
  }
}

sub field { my ($line, $name) = @_; return $line =~ /"$name":(\d+)/ ? $1 : undef }

sub run_command {
  my ($line) = @_;
  my $id = field($line, 'id');
  return unless defined $id;
  my $timeout = field($line, 'timeoutMs') // 0;
  my $max = field($line, 'maxOutputBytes') // 0;
  my @argv = $line =~ /"argv":\[([^\]]*)\]/ ? map { pack('H*', $_) } ($1 =~ /"([0-9a-f]*)"/g) : ();
  my $stdin = $line =~ /"stdin":"([0-9a-f]*)"/ ? pack('H*', $1) : '';
  if (!@argv) { send_line(qq({"op":"exit","id":$id,"error":"empty argv"})); return }
  send_line(qq({"op":"accepted","id":$id}));
  my ($in_r, $in_w, $out_r, $out_w, $err_r, $err_w);
  if (!(pipe($in_r, $in_w) && pipe($out_r, $out_w) && pipe($err_r, $err_w))) {
    send_line(qq({"op":"exit","id":$id,"error":"pipe: $!"}));
    return;
  }
  my $pid = fork();
  if (!defined $pid) {
    my $error = "$!";
    sweep(0);
    send_line(qq({"op":"exit","id":$id,"error":"fork: $error"}));
    return;
  }
  if ($pid == 0) {
    $SIG{CHLD} = 'DEFAULT';
    $SIG{PIPE} = 'DEFAULT';
    setpgrp(0, 0);
    # Reopening the standard handles keeps their descriptors (dup2); every other descriptor of the
    # supervisor's is close-on-exec (Perl opens everything above fd 2 that way).
    open(STDIN, '<&', $in_r) && open(STDOUT, '>&', $out_w) && open(STDERR, '>&', $err_w) or exit 1;
    chdir($WORKDIR) or do { syswrite(STDERR, "supervisor: chdir $WORKDIR: $!\n"); exit 1 };
    exec { $argv[0] } @argv;
    syswrite(STDERR, "supervisor: execvp $argv[0]: $!\n");
    exit 1;
  }
  setpgrp($pid, $pid);
  close($in_r);
  close($out_w);
  close($err_w);
  my %outputs = (1 => $out_r, 2 => $err_r);
  my $stdin_at = 0;
  if (!length $stdin) { close($in_w); undef $in_w }

  my $deadline = now() + $timeout / 1000;
  my ($status, $timed_out, $aborted, $truncated, $captured, $swept, $settle_until) = (undef, 0, 0, 0, 0, 0, 0);
  while (1) {
    if (!defined $status) {
      if (waitpid($pid, $WNOHANG) == $pid) { $status = $? }
      elsif (exists $reaped{$pid}) { $status = delete $reaped{$pid} }
    }
    if (defined $status && !$swept) {
      sweep($pid);
      close_relays();
      $swept = 1;
      $settle_until = now() + 1;
    }
    last if defined $status && !%outputs;
    my $wait;
    if (!defined $status) {
      $wait = $deadline - now();
      if ($wait <= 0) { $timed_out = 1; sweep($pid); next }
    } else {
      $wait = $settle_until - now();
      last if $wait <= 0;
    }
    $wait = 0.5 if $wait > 0.5;
    my ($rin, $win) = ('', '');
    vec($rin, fileno($_), 1) = 1 for values %outputs;
    vec($rin, fileno($wake_r), 1) = 1;
    vec($rin, 0, 1) = 1 if $control_open;
    vec($win, fileno($in_w), 1) = 1 if $in_w;
    relay_select(\$rin, \$win) if !defined $status;
    my $ready = select(my $rout = $rin, my $wout = $win, undef, $wait);
    next if $ready <= 0;
    relay_step($rout, $wout) if !defined $status;
    if (vec($rout, fileno($wake_r), 1)) { sysread($wake_r, my $drain, 512) }
    for my $fd (1, 2) {
      my $fh = $outputs{$fd} or next;
      next unless vec($rout, fileno($fh), 1);
      my $n = sysread($fh, my $chunk, $CHUNK);
      if (!defined $n) { next if retry(); $n = 0 }
      if ($n == 0) { close($fh); delete $outputs{$fd}; next }
      my $room = $max - $captured;
      if ($room < $n) {
        $truncated = 1;
        next if $room <= 0;
        $chunk = substr($chunk, 0, $room);
      }
      $captured += length $chunk;
      send_line(qq({"op":"data","id":$id,"fd":$fd,"hex":") . unpack('H*', $chunk) . '"}');
    }
    if ($in_w && vec($wout, fileno($in_w), 1)) {
      # A pipe select() calls writable has room for a page: 4096 bytes never block.
      my $n = syswrite($in_w, $stdin, 4096, $stdin_at);
      if (defined $n) { $stdin_at += $n }
      elsif (!retry()) { $stdin_at = length $stdin }
      if ($stdin_at >= length $stdin) { close($in_w); undef $in_w }
    }
    if ($control_open && vec($rout, 0, 1)) {
      read_control();
      if (!$control_open) { sweep($pid); exit 0 }
      my @kills = grep { /"op":"kill"/ } @pending;
      if (@kills) {
        @pending = grep { !/"op":"kill"/ } @pending;
        if (grep { (field($_, 'id') // -1) == $id } @kills) { $aborted = 1; sweep($pid) }
      }
    }
  }
  close($_) for values %outputs;
  close($in_w) if $in_w;
  close_relays();
  my $signal = defined $status ? $status & 127 : 9;
  my $code = defined $status && $signal == 0 ? $status >> 8 : 'null';
  $signal = 'null' if $signal == 0;
  send_line(qq({"op":"exit","id":$id,"code":$code,"signal":$signal,"timedOut":$timed_out,"aborted":$aborted,"truncated":$truncated}));
  tidy();
}

send_line(qq({"op":"ready","pid":$$}));
while (1) {
  while (@pending) {
    my $line = shift @pending;
    run_command($line) if $line =~ /"op":"exec"/;
  }
  last unless $control_open;
  read_control();
}
sweep(0);
