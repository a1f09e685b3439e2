import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { AcpRuntimeCatalog } from "../brains/ports.js";
import type { AdminAuditReader } from "../control/adminAudit.js";
import type { CredentialCustody } from "../control/credentialCustody.js";
import { IamService } from "../control/iamService.js";
import { cachedIam } from "../control/linkedIamCache.js";
import type { ControlStores, RevocationNotices, SkillVersionResolver } from "../control/ports.js";
import type { CredentialOpenAudit } from "../control/vaultPorts.js";
import type { ExecutableAgentRegistrar } from "../coordinator/ports.js";
import type { PushFieldSealer } from "../coordinator/sealedPushStore.js";
import type { LinkClient } from "../edge/control-link/linkClient.js";
import { CONTROL_METHODS } from "../edge/control-link/linkServices.js";
import type {
  AgentsPort,
  ConsentsPort,
  CredentialsPort,
  IamPort,
  UserProfilesPort,
  VaultsPort,
} from "../edge/http/edgeServices.js";
import type { Clock } from "../kernel/clock.js";
import type { Metrics } from "../kernel/metrics.js";
import type { OutboundConnector } from "../kernel/outboundConnector.js";
import type { TokenSealer } from "../resources/ports.js";
import { MASTER_KEY_ENV, type RetiredMasterKey } from "../secrets/masterKey.js";
import { agreeOnMasterKey } from "../secrets/masterKeyAgreement.js";
import { pushConfigSealer, repositoryTokenSealer, tunnelTokenSealer } from "../secrets/scopedSealers.js";
import type { SqlInstallationFacts } from "../stores/sql/sqlInstallationFacts.js";
import { composeControl, type SessionPins } from "./controlParts.js";
import type { StartupKeys } from "./startupKeys.js";

/**
 * How long a split Coordinator keeps an API key's authentication: a revocation made through another
 * coordinator takes effect here within this.
 */
const LINKED_AUTH_CACHE_MS = 5_000;

export type CustodyPort = Pick<CredentialCustody, (typeof CONTROL_METHODS.custody)[number]>;
export type ApiKeySource = "env" | "generated" | "stored" | "elsewhere" | "control";

/**
 * The banner's line about the bootstrap API key. The key itself is printed once, at the start that
 * made it; later starts say where it is kept, so a restart never copies a secret into a log again.
 */
export function apiKeyBannerLine(key: string | null, source: ApiKeySource, dataDir: string): string {
  if (key === null || source === "elsewhere")
    return "API key: the one printed when this database was first started (another data dir holds it); set AWAKEN_API_KEY on this server to add a key of your own\n";
  switch (source) {
    case "generated":
      return `API key: ${key} (stored in ${dataDir}/api-key; printed this once)\n`;
    case "env":
      return "API key: the one in AWAKEN_API_KEY\n";
    default:
      return `API key: stored in ${dataDir}/api-key (printed at the start that made it)\n`;
  }
}

/** Control as the rest of a process sees it: in this process, or over the private link. */
export interface ControlPlane {
  iam: IamPort;
  agents: AgentsPort;
  vaults: VaultsPort;
  credentials: CredentialsPort;
  consents: ConsentsPort;
  userProfiles: UserProfilesPort;
  custody: CustodyPort;
  credentialOpens: Pick<CredentialOpenAudit, "list">;
  adminAudit: AdminAuditReader;
  /** Seals and opens push configs' tokens only (Control refuses any other identity). */
  pushSealer: PushFieldSealer;
  /** Seals and opens session repositories' tokens only (`repo:` identities; Control refuses any other). */
  repoSealer: TokenSealer;
  /** Seals and opens MCP tunnels' connector tokens only (`tunnel:` identities). */
  tunnelSealer: TokenSealer;
  /** The bootstrap API key when this process made or was given it; null when it lives elsewhere. */
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  /** Zeroes the keys this process holds (none over the link). */
  zeroKeys(): void;
  /** Starts and stops what Control runs in the background (registration's reconciler); none over the link. */
  start(): void;
  stop(): Promise<void>;
}

export interface LocalControlInput {
  dataDir: string;
  /** AWAKEN_API_KEY, if set. */
  apiKey: string | undefined;
  stores: ControlStores;
  facts: SqlInstallationFacts;
  /** The key found before storage opened (`prepareDataDir`); null: agree on the database's, or generate. */
  found: StartupKeys["found"];
  retiredKeys: readonly RetiredMasterKey[];
  clock: Clock;
  metrics: Metrics;
  outbound: OutboundConnector;
  registrar: ExecutableAgentRegistrar;
  sessionPins: SessionPins;
  /** Key revocations shared with the other processes on the database (PostgreSQL only). */
  revocations?: RevocationNotices | undefined;
  /** Pins agents' custom skills at publication (where the skills are stored). */
  skillVersions?: SkillVersionResolver | undefined;
  /** The ACP runtimes `acp:<runtime>` models may name (shipped plus `--acp-runtimes`). */
  acpRuntimes: AcpRuntimeCatalog;
  logger: Logger;
}

export interface LocalControl extends ControlPlane {
  /** Marks every publication unregistered, so the reconciler registers them all again (idempotent). */
  rebuildCatalog(): Promise<number>;
}

/**
 * Control in this process: the master key agreed with the database (a refused replica leaves no
 * key of any kind behind), the services composed, the bootstrap key resolved. On failure the
 * caller closes storage; the retired keys are zeroed here.
 */
export async function openLocalControl(input: LocalControlInput): Promise<LocalControl> {
  const { clock, logger, retiredKeys } = input;
  try {
    const agreed = await agreeOnMasterKey({
      facts: input.facts,
      found: input.found,
      retiredIds: retiredKeys.map((r) => r.masterKey.id),
      dataDir: input.dataDir,
      now: clock.now(),
    });
    const masterKey = agreed.masterKey;
    const parts = composeControl({
      stores: input.stores,
      masterKey,
      retiredKeys: retiredKeys.map((r) => r.masterKey),
      clock,
      metrics: input.metrics,
      outbound: input.outbound,
      registrar: input.registrar,
      sessionPins: input.sessionPins,
      registrationLog: logger.child({ component: "registration" }),
      revocations: input.revocations,
      skillVersions: input.skillVersions,
      acpRuntimes: input.acpRuntimes,
    });
    const { key: apiKey, source: apiKeySource } = await resolveApiKey(input.dataDir, input.apiKey, parts.iam);
    logger.info(
      { component: "secrets", masterKeyId: masterKey.id, source: agreed.source },
      `master key ${masterKey.id} ${agreed.source === "generated" ? "generated into" : "from"} ${agreed.file ?? MASTER_KEY_ENV}`,
    );
    for (const retired of retiredKeys) {
      logger.info(
        { component: "secrets", masterKeyId: retired.masterKey.id },
        `retired master key ${retired.masterKey.id} from ${retired.source} (opens older records only; run \`awaken secrets reseal\`)`,
      );
    }
    return {
      iam: parts.iam,
      agents: parts.agents,
      vaults: parts.vaults,
      credentials: parts.credentials,
      consents: parts.consents,
      userProfiles: parts.userProfiles,
      custody: parts.custody,
      credentialOpens: parts.stores.credentialOpens,
      adminAudit: parts.stores.adminAudit,
      pushSealer: pushConfigSealer(parts.sealer),
      repoSealer: repositoryTokenSealer(parts.sealer),
      tunnelSealer: tunnelTokenSealer(parts.sealer),
      apiKey,
      apiKeySource,
      zeroKeys: () => {
        masterKey.key.fill(0);
        for (const retired of retiredKeys) retired.masterKey.key.fill(0);
      },
      start: () => parts.reconciler.start(),
      rebuildCatalog: () => parts.reconciler.rebuild(),
      stop: () => parts.reconciler.stop(),
    };
  } catch (error) {
    for (const retired of retiredKeys) retired.masterKey.key.fill(0);
    throw error;
  }
}

/**
 * Control reached over the private link (a split Coordinator): every call is Control's own
 * service, answered with its own errors. An API key's answer is kept `cacheMs` (`cachedIam`): a
 * revocation through this coordinator clears it at once, one through another within `cacheMs`.
 */
export function linkedControl(link: LinkClient, clock: Clock): ControlPlane {
  return {
    iam: cachedIam(
      link.service<IamService, typeof CONTROL_METHODS.iam>("iam", CONTROL_METHODS.iam),
      clock,
      LINKED_AUTH_CACHE_MS,
    ),
    agents: link.service("agents", CONTROL_METHODS.agents) as AgentsPort,
    vaults: link.service("vaults", CONTROL_METHODS.vaults) as VaultsPort,
    credentials: link.service("credentials", CONTROL_METHODS.credentials) as CredentialsPort,
    consents: link.service("consents", CONTROL_METHODS.consents) as ConsentsPort,
    userProfiles: link.service("userProfiles", CONTROL_METHODS.userProfiles) as UserProfilesPort,
    custody: link.service("custody", CONTROL_METHODS.custody) as CustodyPort,
    credentialOpens: link.service("credentialOpens", CONTROL_METHODS.credentialOpens) as Pick<
      CredentialOpenAudit,
      "list"
    >,
    adminAudit: link.service("adminAudit", CONTROL_METHODS.adminAudit) as AdminAuditReader,
    pushSealer: link.service("pushSealer", CONTROL_METHODS.pushSealer) as PushFieldSealer,
    repoSealer: link.service("repoSealer", CONTROL_METHODS.repoSealer) as TokenSealer,
    tunnelSealer: link.service("tunnelSealer", CONTROL_METHODS.tunnelSealer) as TokenSealer,
    apiKey: null,
    apiKeySource: "control",
    zeroKeys: () => {},
    start: () => {},
    stop: async () => {},
  };
}

/**
 * `AWAKEN_API_KEY` wins; otherwise a key generated on first start is kept (mode 0600) in the data
 * directory so the same key works after every restart. A database whose bootstrap key was minted by
 * another start (a replica with its own data dir) gets no second one.
 */
async function resolveApiKey(
  dataDir: string,
  fromEnv: string | undefined,
  iam: IamService,
): Promise<{ key: string | null; source: ApiKeySource }> {
  const file = join(dataDir, "api-key");
  const stored = fromEnv ? null : existsSync(file) ? readFileSync(file, "utf8").trim() : null;
  const chosen = fromEnv ?? stored;
  if (chosen) {
    await iam.bootstrap(chosen);
    return { key: chosen, source: fromEnv ? "env" : "stored" };
  }
  const key = IamService.generateKey();
  // Written before it is registered: a crash in between leaves a key file the next start adopts.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  if (await iam.bootstrapGenerated(key)) return { key, source: "generated" };
  rmSync(file, { force: true });
  return { key: null, source: "elsewhere" };
}
