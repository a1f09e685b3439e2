/**
 * The connector's TLS client identity (`awaken tunnel --client-cert --client-key`), for MCP servers
 * that require mutual TLS. It belongs to the private network: read once from the connector's own
 * files, never sent to the coordinator. The key file must be its owner's alone, as the master key
 * file must; the key is never printed (errors name the file, never its content).
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync, type Stats, statSync } from "node:fs";

export interface ClientIdentity {
  /** The client certificate chain (PEM), leaf first. */
  cert: string;
  /** Its private key (PEM, unencrypted). */
  key: string;
}

export class ClientIdentityError extends Error {}

/** Both files or neither: `undefined` for neither; a clear refusal for anything wrong. */
export function readClientIdentity(
  certFile: string | undefined,
  keyFile: string | undefined,
): ClientIdentity | undefined {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    throw new ClientIdentityError(
      "--client-cert and --client-key go together: give both (mutual TLS) or neither",
    );
  }
  const cert = readRegular(certFile, "client certificate");
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch {
    throw new ClientIdentityError(`client certificate ${certFile} is not a PEM certificate`);
  }
  const stat = statOf(keyFile, "client key");
  // Mode bits mean nothing on Windows; everywhere else group/other access is a refusal.
  if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, "0");
    throw new ClientIdentityError(
      `client key ${keyFile} has mode ${mode}: users other than its owner can reach it. ` +
        `Run \`chmod 600 ${keyFile}\` (and replace the key if someone else may have read it).`,
    );
  }
  const key = readRegular(keyFile, "client key");
  let matches: boolean;
  try {
    matches = leaf.checkPrivateKey(createPrivateKey(key));
  } catch {
    throw new ClientIdentityError(
      `client key ${keyFile} is not an unencrypted PEM private key (an encrypted key is not supported)`,
    );
  }
  if (!matches) {
    throw new ClientIdentityError(`client key ${keyFile} is not the key of client certificate ${certFile}`);
  }
  return { cert, key };
}

function statOf(file: string, what: string): Stats {
  let stat: Stats;
  try {
    stat = statSync(file);
  } catch (error) {
    throw new ClientIdentityError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  if (!stat.isFile()) throw new ClientIdentityError(`${what} ${file} is not a regular file`);
  return stat;
}

function readRegular(file: string, what: string): string {
  statOf(file, what);
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new ClientIdentityError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
}
