import type { AcpRuntimeCatalog } from "../brains/ports.js";
import { AgentService } from "../control/agentService.js";
import { apiKeyHashing } from "../control/apiKeyHashing.js";
import { ConsentService } from "../control/consent.js";
import { CredentialCustody } from "../control/credentialCustody.js";
import { CredentialService } from "../control/credentialService.js";
import { CredentialValidator } from "../control/credentialValidation.js";
import { IamService } from "../control/iamService.js";
import type { RefreshedTokenFields } from "../control/oauthRefresh.js";
import type { ControlStores, RevocationNotices, SkillVersionResolver } from "../control/ports.js";
import type { RegistrationLog } from "../control/publicationRegistration.js";
import { RegistrationReconciler } from "../control/registrationReconciler.js";
import { UserProfileService } from "../control/userProfiles.js";
import type { CredentialView } from "../control/vaultPorts.js";
import { VaultService } from "../control/vaultService.js";
import type { CredentialPin, ExecutableAgentRegistrar } from "../coordinator/ports.js";
import type { Clock } from "../kernel/clock.js";
import type { Metrics } from "../kernel/metrics.js";
import type { OutboundConnector } from "../kernel/outboundConnector.js";
import { countedCredentialOpens } from "../observability/countedCredentialOpens.js";
import {
  ACCESS_TOKEN_SIGNING_PURPOSE,
  API_KEY_HASH_PURPOSE,
  deriveWrappingKey,
  USER_PROFILE_ACTION_PURPOSE,
} from "../secrets/envelope.js";
import { FieldSealer } from "../secrets/fieldSealer.js";
import { LocalSecretStore } from "../secrets/localSecretStore.js";
import type { MasterKey } from "../secrets/masterKey.js";

/** Where a session's credential pins live: the Coordinator's session records (in process or over the link). */
export interface SessionPins {
  get(workspaceId: string, sessionId: string): Promise<CredentialPin[] | null>;
  advance(workspaceId: string, sessionId: string, pins: CredentialPin[]): Promise<void>;
}

export interface ControlPartsInput {
  stores: ControlStores;
  masterKey: MasterKey;
  retiredKeys: readonly MasterKey[];
  clock: Clock;
  metrics: Metrics;
  /** Every connection made for users (validation probes, token refreshes). */
  outbound: OutboundConnector;
  /** The Coordinator's catalog: local in all-in-one, over the link when split. */
  registrar: ExecutableAgentRegistrar;
  sessionPins: SessionPins;
  /** Where registration says what it could not land yet (ids and codes only). */
  registrationLog: RegistrationLog;
  /** Key revocations shared with the other processes on the database (PostgreSQL only). */
  revocations?: RevocationNotices | undefined;
  /** Pins agents' custom skills at publication: the Resources context's, in process or over the link. */
  skillVersions?: SkillVersionResolver | undefined;
  /** The ACP runtimes `acp:<runtime>` models may name (shipped plus `--acp-runtimes`). */
  acpRuntimes: AcpRuntimeCatalog;
}

/** Control's services, composed the same way whether the Coordinator is in this process or not. */
export interface ControlParts {
  iam: IamService;
  agents: AgentService;
  vaults: VaultService;
  credentials: CredentialService;
  custody: CredentialCustody;
  consents: ConsentService;
  userProfiles: UserProfileService;
  sealer: FieldSealer;
  stores: ControlStores;
  /** Lands publications whose registration failed (the Coordinator was down); started by the caller. */
  reconciler: RegistrationReconciler;
}

/**
 * Control: IAM (API keys hashed and access tokens signed under keys derived from the agreed master
 * key), authoring, vault ingress, custody, consent and user profiles. The master key stays in this process.
 */
export function composeControl(input: ControlPartsInput): ControlParts {
  const { masterKey, retiredKeys, clock, outbound } = input;
  // Every credential open (in-process and remote holders, the validation probe) is audited: counted there.
  const stores: ControlStores = {
    ...input.stores,
    credentialOpens: countedCredentialOpens(input.stores.credentialOpens, input.metrics),
  };
  // Application access tokens are signed under a key derived from the master key: every replica
  // holds the same one, and a rotation ends the tokens (they live 15 minutes at most). API keys are
  // stored as HMAC-SHA-256 under a key derived from the same master key (its own purpose).
  const iam = new IamService(
    stores.iam,
    clock,
    undefined,
    deriveWrappingKey(masterKey.key, ACCESS_TOKEN_SIGNING_PURPOSE),
    apiKeyHashing(
      { masterKeyId: masterKey.id, key: deriveWrappingKey(masterKey.key, API_KEY_HASH_PURPOSE) },
      retiredKeys.map((retired) => ({
        masterKeyId: retired.id,
        key: deriveWrappingKey(retired.key, API_KEY_HASH_PURPOSE),
      })),
    ),
    input.revocations ?? null,
  );
  const vaults = new VaultService(stores.vaults, clock);
  const sealer = new FieldSealer(new LocalSecretStore(masterKey, [...retiredKeys]));
  // A refreshed mcp_oauth token is committed through vault ingress like any rotation (sealed
  // there), only from exactly the revision it refreshed: by the validation probe and by holders.
  const commitRefresh = (
    workspaceId: string,
    vaultId: string,
    credentialId: string,
    fromRevision: number,
    fields: RefreshedTokenFields,
  ): Promise<CredentialView> =>
    // The server commits the refresh; the audit names it `system`.
    credentials.update({ workspaceId, actor: "system" }, vaultId, credentialId, {
      expectedRevision: fromRevision,
      auth: {
        type: "mcp_oauth",
        access_token: fields.accessToken,
        expires_at: fields.expiresAt,
        ...(fields.refreshToken ? { refresh: { refresh_token: fields.refreshToken } } : {}),
      },
    });
  // mcp_oauth_validate's live probe; a refresh it makes is committed like a holder's (below).
  const validator: CredentialValidator = new CredentialValidator(stores.credentials, {
    opener: sealer,
    audit: stores.credentialOpens,
    clock,
    rotate: (view, fromRevision, fields) =>
      commitRefresh(view.head.workspaceId, view.head.vaultId, view.head.id, fromRevision, fields),
    outbound,
  });
  const credentials: CredentialService = new CredentialService(
    stores.credentials,
    vaults,
    sealer,
    clock,
    validator,
  );
  // Pinning at session creation and admission + open for holders, against the session's own pins.
  const custody = new CredentialCustody(
    stores.vaults,
    stores.credentials,
    sealer,
    stores.credentialOpens,
    (workspaceId, sessionId) => input.sessionPins.get(workspaceId, sessionId),
    clock,
    {
      // A holder's mcp_oauth refresh, from exactly the pinned revision.
      rotate: async (pin, fromRevision, fields) =>
        (await commitRefresh(pin.workspaceId, pin.vaultId, pin.credentialId, fromRevision, fields)).revision
          .revision,
      advancePins: (workspaceId, sessionId, pins) => input.sessionPins.advance(workspaceId, sessionId, pins),
      outbound,
    },
    input.acpRuntimes,
  );
  const agents = new AgentService(
    stores.publications,
    input.registrar,
    clock,
    input.registrationLog,
    input.skillVersions,
    input.acpRuntimes,
  );
  const reconciler = new RegistrationReconciler({
    store: stores.publications,
    registrar: input.registrar,
    clock,
    log: input.registrationLog,
  });
  const consents = new ConsentService(stores.consents, () => clock.now());
  // Action and enrollment URLs are signed under a key of their own, derived like IAM's.
  const userProfiles = new UserProfileService(
    stores.userProfiles,
    clock,
    deriveWrappingKey(masterKey.key, USER_PROFILE_ACTION_PURPOSE),
  );
  return { iam, agents, vaults, credentials, custody, consents, userProfiles, sealer, stores, reconciler };
}
