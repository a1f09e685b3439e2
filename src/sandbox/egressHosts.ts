/**
 * Host-name matching for sandbox egress (wire §5), shared by the proxy's
 * environment policy (egressProxy.ts) and the credentials' own hosts (secretSubstitution.ts); a
 * module of its own so neither imports the other.
 */

/** Lower case, without a trailing dot or IPv6 brackets. */
export function normalizeHost(host: string): string {
  let value = host.trim().toLowerCase();
  if (value.startsWith("[") && value.endsWith("]")) value = value.slice(1, -1);
  if (value.endsWith(".")) value = value.slice(0, -1);
  return value;
}

/** `allowed_hosts` matching: exact, or `*.domain` for strict subdomains of `domain`. */
export function hostAllowed(host: string, allowedHosts: readonly string[]): boolean {
  const name = normalizeHost(host);
  if (name === "") return false;
  for (const entry of allowedHosts) {
    const pattern = normalizeHost(entry);
    if (pattern.startsWith("*.")) {
      const domain = pattern.slice(2);
      if (domain !== "" && name.endsWith(`.${domain}`) && name.length > domain.length + 1) return true;
    } else if (pattern !== "" && name === pattern) {
      return true;
    }
  }
  return false;
}
