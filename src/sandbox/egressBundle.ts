/**
 * Where the sandbox finds the egress CA's trust bundle (egressCa.ts), and the variables that point
 * the usual TLS clients at it. Constants only, so the tier can set them without loading the CA code.
 */

/** The bundle's name in the proxy's directory (bound read-only inside the sandbox). */
export const CA_BUNDLE_NAME = "ca-bundle.pem";

/** The variables pointing common clients at the bundle (OpenSSL, Node, Python requests, curl, git). */
export const CA_BUNDLE_VARIABLES = [
  "SSL_CERT_FILE",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
] as const;
