/**
 * `awaken tunnel --client-cert --client-key`: both or neither, the key file its owner's alone, the
 * pair checked at start; no refusal quotes the key.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readClientIdentity } from "../../src/cli/clientIdentity.js";
import { createTestCa } from "../support/testCa.js";

describe("awaken tunnel --client-cert/--client-key (the connector's mutual TLS identity)", () => {
  let dir = "";
  let certFile = "";
  let keyFile = "";
  let key = "";
  let cert = "";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "client-identity-"));
    ({ cert, key } = await (await createTestCa({ name: "client CA" })).issueClient("connector"));
    certFile = join(dir, "client.crt");
    keyFile = join(dir, "client.key");
    writeFileSync(certFile, cert);
    writeFileSync(keyFile, key, { mode: 0o600 });
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("neither: no identity; both: the certificate and key, read once", () => {
    expect(readClientIdentity(undefined, undefined)).toBeUndefined();
    expect(readClientIdentity(certFile, keyFile)).toEqual({ cert, key });
  });

  it("refuses one without the other", () => {
    expect(() => readClientIdentity(certFile, undefined)).toThrow(
      /--client-cert and --client-key go together/,
    );
    expect(() => readClientIdentity(undefined, keyFile)).toThrow(
      /--client-cert and --client-key go together/,
    );
  });

  it("refuses a file it cannot read, a directory, and a certificate that is not one", () => {
    expect(() => readClientIdentity(join(dir, "missing.crt"), keyFile)).toThrow(
      /cannot read client certificate .*missing\.crt: ENOENT/,
    );
    expect(() => readClientIdentity(certFile, join(dir, "missing.key"))).toThrow(
      /cannot read client key .*missing\.key: ENOENT/,
    );
    expect(() => readClientIdentity(certFile, dir)).toThrow(/is not a regular file/);
    expect(() => readClientIdentity(keyFile, keyFile)).toThrow(/is not a PEM certificate/);
  });

  it.skipIf(process.platform === "win32")(
    "refuses a key file that group or others can read, naming its mode",
    () => {
      const loose = join(dir, "loose.key");
      for (const mode of [0o640, 0o604, 0o660]) {
        writeFileSync(loose, key);
        chmodSync(loose, mode);
        const refusal = (() => {
          try {
            readClientIdentity(certFile, loose);
          } catch (error) {
            return (error as Error).message;
          }
          return "";
        })();
        expect(refusal).toMatch(
          new RegExp(
            `client key .*loose\\.key has mode 0${mode.toString(8)}: users other than its owner.*chmod 600`,
          ),
        );
        expect(refusal).not.toContain(key.split("\n")[1]);
      }
    },
  );

  it("refuses a key that is not the certificate's, and one that is not a private key", async () => {
    const other = join(dir, "other.key");
    writeFileSync(other, (await (await createTestCa()).issueClient("someone else")).key, { mode: 0o600 });
    expect(() => readClientIdentity(certFile, other)).toThrow(/is not the key of client certificate/);
    const garbage = join(dir, "garbage.key");
    writeFileSync(garbage, "not a key\n", { mode: 0o600 });
    expect(() => readClientIdentity(certFile, garbage)).toThrow(/is not an unencrypted PEM private key/);
  });
});
