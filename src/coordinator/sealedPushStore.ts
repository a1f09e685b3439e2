import type { RevisionIdentity, ScopedSealer } from "../secrets/ports.js";
import { decodeSealedText, encodeSealedText, SEALED_TEXT_PREFIX } from "../secrets/sealedText.js";
import type { ClaimedDelivery, PushOutboxStore, PushSubscription } from "./pushOutbox.js";

const PUSH_IDENTITY = "push:";

/** What the push store needs of a sealer: Control's, scoped to push configs' identities. */
export type PushFieldSealer = ScopedSealer;

/**
 * The push store with a config's token and authentication credentials sealed under the master key
 * (like vault credentials), so the database never holds them in plaintext. They are opened only
 * for a claimed delivery, bound to the config's workspace, task and id (a sealed value copied to
 * another config does not open). A value sealed under a key no longer held opens to nothing: that
 * delivery goes without it (the webhook refuses it, the row is retried, then abandoned).
 */
export function sealedPushStore(inner: PushOutboxStore, sealer: PushFieldSealer): PushOutboxStore {
  return {
    async subscribe(s, first, now) {
      if (s.token === "" && s.authCredentials === "") return inner.subscribe(s, first, now);
      const { sealed } = await sealer.seal(identityOf(s), { token: s.token, credentials: s.authCredentials });
      return inner.subscribe({ ...s, token: encodeSealedText(sealed), authCredentials: "" }, first, now);
    },
    subscription: (w, t, c) => inner.subscription(w, t, c),
    subscriptions: (w, t) => inner.subscriptions(w, t),
    unsubscribe: (w, t, c) => inner.unsubscribe(w, t, c),
    following: (limit, after) => inner.following(limit, after),
    advance: (from, toSeq, finished, rows, now) => inner.advance(from, toSeq, finished, rows, now),
    settle: (d, owner, outcome, now) => inner.settle(d, owner, outcome, now),
    nextDueAt: () => inner.nextDueAt(),
    async claim(owner, now, leaseMs, limit) {
      const claimed = await inner.claim(owner, now, leaseMs, limit);
      return Promise.all(claimed.map((d) => opened(sealer, d)));
    },
  };
}

function identityOf(s: Pick<PushSubscription, "workspaceId" | "taskId" | "configId">): RevisionIdentity {
  return {
    credentialId: `${PUSH_IDENTITY}${s.taskId}/${s.configId}`,
    revision: 1,
    workspaceId: s.workspaceId,
  };
}

/**
 * A webhook endpoint's signing secret, sealed in the push scope bound to its workspace, endpoint
 * and secret revision: a regenerated secret is a new revision, and a copied one does not open.
 */
export function webhookSecretIdentity(
  workspaceId: string,
  endpointId: string,
  revision: number,
): RevisionIdentity {
  return { credentialId: `${PUSH_IDENTITY}webhook/${endpointId}`, revision, workspaceId };
}

/** The field a webhook endpoint's sealed record carries its secret in. */
export const WEBHOOK_SECRET_FIELD = "secret";

async function opened(sealer: PushFieldSealer, d: ClaimedDelivery): Promise<ClaimedDelivery> {
  if (!d.token.startsWith(SEALED_TEXT_PREFIX)) return d;
  if (d.format === "webhook") {
    const sealed = decodeSealedText(d.token);
    const identity = webhookSecretIdentity(d.workspaceId, d.configId, d.secretRevision);
    const value = sealed
      ? await sealer.openField(identity, sealed, WEBHOOK_SECRET_FIELD).catch(() => null)
      : null;
    const secret = value ? value.toString("utf8") : "";
    value?.fill(0);
    return { ...d, token: secret };
  }
  const sealed = decodeSealedText(d.token);
  const field = async (name: string) => {
    const value = sealed ? await sealer.openField(identityOf(d), sealed, name).catch(() => null) : null;
    if (!value) return "";
    const text = value.toString("utf8");
    value.fill(0);
    return text;
  };
  return { ...d, token: await field("token"), authCredentials: await field("credentials") };
}
