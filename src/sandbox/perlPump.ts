/**
 * `pump($from, $to)`: copies one direction of a bridged connection until its end (or a write fails),
 * with Perl's core builtins only. Shared by the in-sandbox bridges (the egress relay, the local
 * socket bridge); the caller half-closes what it must.
 */
export const PERL_PUMP = `sub pump {
  my ($from, $to) = @_;
  my $buf;
  while (1) {
    my $n = sysread($from, $buf, 65536);
    last unless $n;
    my $o = 0;
    while ($o < $n) { my $w = syswrite($to, $buf, $n - $o, $o); return unless defined $w; $o += $w }
  }
}`;
