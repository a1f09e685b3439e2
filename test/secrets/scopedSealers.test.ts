/**
 * The sealers Control lends: each seals and opens its own family of identities and refuses every
 * other (a vault credential, the other family), so a borrower — over the private link too — never
 * opens what is not its own. The field names of what it sealed stay with Control.
 */
import { describe, expect, it } from "vitest";
import { FieldSealer } from "../../src/secrets/fieldSealer.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { pushConfigSealer, repositoryTokenSealer } from "../../src/secrets/scopedSealers.js";

const WS = "wrkspc_1";
const push = { credentialId: "push:task_1/cfg_1", revision: 1, workspaceId: WS };
const repo = { credentialId: "repo:sesrsc_1", revision: 1, workspaceId: WS };
const vault = { credentialId: "vcrd_1", revision: 1, workspaceId: WS };

describe("scoped sealers", () => {
  const fieldSealer = new FieldSealer(new LocalSecretStore({ id: "mk_test", key: Buffer.alloc(32, 7) }));

  it("the push sealer seals and opens push configs only", async () => {
    const sealer = pushConfigSealer(fieldSealer);
    const sealed = await sealer.seal(push, { token: "tok", credentials: "cred" });
    expect(Object.keys(sealed)).toEqual(["sealed"]);
    expect((await sealer.openField(push, sealed.sealed, "token"))?.toString("utf8")).toBe("tok");
    for (const other of [repo, vault]) {
      await expect(sealer.seal(other, { token: "t" })).rejects.toThrow(/only push configs/);
      const { sealed: theirs } = await fieldSealer.seal(other, { token: "t" });
      await expect(sealer.openField(other, theirs, "token")).rejects.toThrow(/only push configs/);
    }
  });

  it("the repository sealer seals and opens repositories' tokens only", async () => {
    const sealer = repositoryTokenSealer(fieldSealer);
    const sealed = await sealer.seal(repo, { token: "tok" });
    expect((await sealer.openField(repo, sealed.sealed, "token"))?.toString("utf8")).toBe("tok");
    for (const other of [push, vault]) {
      await expect(sealer.seal(other, { token: "t" })).rejects.toThrow(/only repository resources/);
      const { sealed: theirs } = await fieldSealer.seal(other, { token: "t" });
      await expect(sealer.openField(other, theirs, "token")).rejects.toThrow(/only repository resources/);
    }
  });
});
