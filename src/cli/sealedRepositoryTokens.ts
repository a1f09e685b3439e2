import { AwakenError } from "../kernel/errors.js";
import type { TokenSealer } from "../resources/ports.js";
import type { FieldSealer } from "../secrets/fieldSealer.js";
import type { RevisionIdentity } from "../secrets/ports.js";

const REPOSITORY_IDENTITY = "repo:";

/**
 * The sealer Control lends session resources (a split Coordinator's, over the link): it seals and
 * opens repository tokens' identities (`repo:<resource id>`) only, so neither the Resources context
 * nor the link ever opens a vault credential or a push config's token with it.
 */
export function repositoryTokenSealer(sealer: Pick<FieldSealer, "seal" | "openField">): TokenSealer {
  const check = (identity: RevisionIdentity) => {
    if (!identity.credentialId.startsWith(REPOSITORY_IDENTITY)) {
      throw new AwakenError(
        "permission_denied",
        "only repository resources' tokens are sealed or opened here",
      );
    }
  };
  return {
    seal: async (identity, fields) => {
      check(identity);
      const { sealed } = await sealer.seal(identity, fields);
      return { sealed };
    },
    openField: async (identity, sealed, field) => {
      check(identity);
      return sealer.openField(identity, sealed, field);
    },
  };
}
