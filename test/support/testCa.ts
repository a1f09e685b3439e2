/**
 * A certificate authority made in the test (never a real one): its CA certificate as PEM, and
 * server and client certificates it signs (key and chain as PEM, for `node:https` and mutual TLS).
 */
import "reflect-metadata";
import { createHash, webcrypto } from "node:crypto";
import { isIP } from "node:net";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 86_400_000;
type Keys = webcrypto.CryptoKeyPair;

const serial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
    .toString("hex")
    .replace(/^./, "1");

async function keys(): Promise<Keys> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as Keys;
}

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString("base64").replace(/(.{64})/g, "$1\n")}\n-----END PRIVATE KEY-----\n`;
}

export interface TestCa {
  pem: string;
  /** Lowercase hex SHA-256 of the certificate's DER. */
  fingerprint: string;
  notAfter: Date;
  /** A server certificate for `host` (a name or an IP), signed by this CA. */
  issueServer(host: string): Promise<{ key: string; cert: string }>;
  /** A client certificate (mutual TLS) for `name`, signed by this CA. */
  issueClient(name: string): Promise<{ key: string; cert: string }>;
}

export async function createTestCa(
  options: { name?: string; isCa?: boolean; notAfter?: Date; notBefore?: Date } = {},
): Promise<TestCa> {
  const caKeys = await keys();
  const now = Date.now();
  const notAfter = options.notAfter ?? new Date(now + 30 * DAY_MS);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${options.name ?? "Awaken test tunnel CA"}`,
    notBefore: options.notBefore ?? new Date(now - DAY_MS),
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(options.isCa ?? true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const pem = ca.toString("pem");
  return {
    pem,
    fingerprint: createHash("sha256").update(Buffer.from(ca.rawData)).digest("hex"),
    notAfter,
    issueServer: (host) =>
      issue(`CN=${host}`, x509.ExtendedKeyUsage.serverAuth, [
        new x509.SubjectAlternativeNameExtension([{ type: isIP(host) === 0 ? "dns" : "ip", value: host }]),
      ]),
    issueClient: (name) => issue(`CN=${name}`, x509.ExtendedKeyUsage.clientAuth, []),
  };

  async function issue(
    subject: string,
    usage: x509.ExtendedKeyUsageType,
    extra: x509.Extension[],
  ): Promise<{ key: string; cert: string }> {
    const leafKeys = await keys();
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject,
      issuer: ca.subject,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + 7 * DAY_MS),
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.ExtendedKeyUsageExtension([usage]),
        ...extra,
      ],
    });
    return { key: await pkcs8Pem(leafKeys.privateKey), cert: `${leaf.toString("pem")}\n${pem}\n` };
  }
}
