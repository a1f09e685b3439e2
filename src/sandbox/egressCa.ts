/**
 * The per-sandbox certificate authority of the egress proxy's TLS interception (vault
 * `environment_variable` credentials): to substitute a secret into an HTTPS request the proxy must
 * see inside it, so for the hosts that have a substitution (and only those) it answers the sandbox's
 * TLS itself with a leaf certificate this CA signs, and the sandbox trusts the CA through a bundle
 * (system CAs + this CA) named by SSL_CERT_FILE & co.
 *
 * One CA per sandbox, generated when the sandbox starts: its ECDSA P-256 key is a non-extractable
 * WebCrypto key that never leaves this (host) process and dies with the proxy, so a CA a sandbox
 * learned is worth nothing anywhere else. X.509 encoding: `@peculiar/x509` (pure JS over WebCrypto,
 * no native code); it needs the `reflect-metadata` polyfill, imported first. This module is loaded
 * only when a sandbox has credentials (egressSecrets.ts imports it dynamically), so the polyfill
 * is not installed into a worker that never intercepts.
 */

import "reflect-metadata";
import { webcrypto } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import * as x509 from "@peculiar/x509";
import { CA_BUNDLE_NAME } from "./egressBundle.js";

// The library speaks the DOM's WebCrypto types; Node's implementation is the same API.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 86_400_000;
/** The CA outlives any sandbox (a session's sandbox lives while the session is used). */
const CA_VALIDITY_MS = 365 * DAY_MS;
/** Leaves are short-lived and re-issued when close to expiry. */
const LEAF_VALIDITY_MS = 7 * DAY_MS;
const LEAF_RENEW_MARGIN_MS = DAY_MS;
/** Clock skew between host and sandbox is nil (same kernel), but tools compare with their own. */
const BACKDATE_MS = 60 * 60_000;

/** Where the host keeps its system CAs (Debian/Ubuntu, RHEL/Fedora, Alpine/others). */
const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
];

function randomSerial(): string {
  // Positive (high bit clear), 16 bytes: unique per certificate without any state.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString("hex");
}

export class SandboxCa {
  private readonly leaves = new Map<string, { context: SecureContext; notAfter: number }>();

  private constructor(
    private readonly ca: x509.X509Certificate,
    private readonly caKey: CryptoKey,
    /** One key for every leaf of this sandbox (PEM: node:tls needs the key bytes). */
    private readonly leafKeys: CryptoKeyPair,
    private readonly leafKeyPem: string,
  ) {}

  static async create(): Promise<SandboxCa> {
    // The CA key cannot be exported: it signs here and nowhere else.
    const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const now = Date.now();
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: `CN=Awaken sandbox egress CA ${randomSerial().slice(0, 8)}, O=Awaken Agents`,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + CA_VALIDITY_MS),
      keys: caKeys,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    const leafKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", leafKeys.privateKey));
    const leafKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString("base64").replace(/(.{64})/g, "$1\n")}\n-----END PRIVATE KEY-----\n`;
    pkcs8.fill(0);
    return new SandboxCa(ca, caKeys.privateKey, leafKeys, leafKeyPem);
  }

  /** The CA certificate (public), as the sandbox trusts it. */
  get certificatePem(): string {
    return this.ca.toString("pem");
  }

  /** A TLS server context presenting a leaf for `host` (a name or an IP literal), cached. */
  async contextFor(host: string): Promise<SecureContext> {
    const cached = this.leaves.get(host);
    if (cached && cached.notAfter - LEAF_RENEW_MARGIN_MS > Date.now()) return cached.context;
    const now = Date.now();
    const notAfter = now + LEAF_VALIDITY_MS;
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: `CN=${host.replace(/[,=+<>#;\\"]/g, "")}`,
      issuer: this.ca.subject,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(notAfter),
      publicKey: this.leafKeys.publicKey,
      signingKey: this.caKey,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: isIP(host) === 0 ? "dns" : "ip", value: host }]),
        await x509.SubjectKeyIdentifierExtension.create(this.leafKeys.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(this.ca.publicKey),
      ],
    });
    const context = createSecureContext({
      key: this.leafKeyPem,
      cert: `${leaf.toString("pem")}\n${this.certificatePem}\n`,
      minVersion: "TLSv1.2",
    });
    this.leaves.set(host, { context, notAfter });
    return context;
  }

  /**
   * Writes the trust bundle the sandbox's clients use (the host's system CAs, or Node's own list
   * when the host has none, then this CA) into `directory`; returns its host path.
   */
  async writeBundle(directory: string): Promise<string> {
    const system = SYSTEM_BUNDLES.find((path) => existsSync(path));
    const roots = system ? await readFile(system, "utf8") : rootCertificates.join("\n");
    const path = join(directory, CA_BUNDLE_NAME);
    await writeFile(path, `${roots.trimEnd()}\n${this.certificatePem}\n`, { mode: 0o644 });
    return path;
  }
}
