/**
 * A tunnel's CA certificate as a client sends it: exactly one PEM `CERTIFICATE` block, no
 * private-key material, at most 8 KiB (SDK), that parses as X.509, says it is a CA, and has not
 * expired. What is kept is the certificate re-encoded (nothing the client put around it) with the
 * SHA-256 fingerprint of its DER encoding and its expiry.
 */
import "reflect-metadata";
import { createHash } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { invalid } from "../../kernel/errors.js";

export const CA_PEM_MAX_BYTES = 8 * 1024;

export interface ParsedCaCertificate {
  pem: string;
  fingerprint: string;
  expiresAt: number | null;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

export function parseCaCertificate(text: string, now: number): ParsedCaCertificate {
  if (Buffer.byteLength(text, "utf8") > CA_PEM_MAX_BYTES) {
    throw invalid(`ca_certificate_pem: must be at most ${CA_PEM_MAX_BYTES} bytes`);
  }
  if (/PRIVATE KEY/.test(text)) throw invalid("ca_certificate_pem: must not contain private-key material");
  const blocks = [...text.matchAll(BLOCK)];
  if (blocks.length !== 1 || blocks[0]?.[1] !== "CERTIFICATE") {
    throw invalid("ca_certificate_pem: must contain exactly one PEM CERTIFICATE block");
  }
  let certificate: x509.X509Certificate;
  try {
    certificate = new x509.X509Certificate(blocks[0][0]);
  } catch {
    throw invalid("ca_certificate_pem: is not a valid X.509 certificate");
  }
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension);
  if (!constraints?.ca) {
    throw invalid("ca_certificate_pem: is not a CA certificate (its basic constraints do not say CA)");
  }
  const notAfter = certificate.notAfter.getTime();
  if (Number.isFinite(notAfter) && notAfter <= now) {
    throw invalid("ca_certificate_pem: the certificate has expired");
  }
  const der = Buffer.from(certificate.rawData);
  return {
    pem: certificate.toString("pem"),
    fingerprint: createHash("sha256").update(der).digest("hex"),
    // X.509's "no well-defined expiration" (99991231235959Z) reads as no expiry.
    expiresAt: Number.isFinite(notAfter) && notAfter < Date.UTC(9999, 11, 31) ? notAfter : null,
  };
}
