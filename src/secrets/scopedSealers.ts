import { AwakenError } from "../kernel/errors.js";
import type { FieldSealer } from "./fieldSealer.js";
import type { RevisionIdentity, ScopedSealer } from "./ports.js";

type Sealer = Pick<FieldSealer, "seal" | "openField">;

/** Push configs' tokens and authentication credentials (`push:<task id>/<config id>`). */
export function pushConfigSealer(sealer: Sealer): ScopedSealer {
  return scopedSealer(sealer, "push:", "only push configs' tokens are sealed or opened here");
}

/** Session repositories' tokens (`repo:<resource id>`), which the Resources context keeps sealed. */
export function repositoryTokenSealer(sealer: Sealer): ScopedSealer {
  return scopedSealer(sealer, "repo:", "only repository resources' tokens are sealed or opened here");
}

/** MCP tunnels' connector tokens (`tunnel:<tunnel id>/<token id>`), which the Coordinator keeps sealed. */
export function tunnelTokenSealer(sealer: Sealer): ScopedSealer {
  return scopedSealer(sealer, "tunnel:", "only tunnels' connector tokens are sealed or opened here");
}

function scopedSealer(sealer: Sealer, prefix: string, refusal: string): ScopedSealer {
  const check = (identity: RevisionIdentity) => {
    if (!identity.credentialId.startsWith(prefix)) throw new AwakenError("permission_denied", refusal);
  };
  return {
    seal: async (identity, fields) => {
      check(identity);
      // The sealed record only: the field names stay with Control.
      const { sealed } = await sealer.seal(identity, fields);
      return { sealed };
    },
    openField: async (identity, sealed, field) => {
      check(identity);
      return sealer.openField(identity, sealed, field);
    },
  };
}
