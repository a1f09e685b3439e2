import type { ControlStores } from "../../control/ports.js";
import type { CoordinatorStores } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import type { ResourceStores } from "../../resources/services.js";
import type { Db, SqlDialect } from "./db.js";
import { SqlAdminAudit } from "./sqlAdminAudit.js";
import { SqlCatalogStore } from "./sqlCatalogStore.js";
import { SqlConsentStore } from "./sqlConsentStore.js";
import { SqlCredentialOpenAudit } from "./sqlCredentialOpenAudit.js";
import { SqlCredentialStore } from "./sqlCredentialStore.js";
import { SqlEnvironmentKeyStore } from "./sqlEnvironmentKeyStore.js";
import { SqlEnvironmentStore } from "./sqlEnvironmentStore.js";
import { SqlFileStore } from "./sqlFileStore.js";
import { SqlHistoryReader } from "./sqlHistoryReader.js";
import { SqlIamStore } from "./sqlIamStore.js";
import { SqlImageBuildStore } from "./sqlImageBuildStore.js";
import { SqlMemoryStore } from "./sqlMemoryStore.js";
import { SqlPublicationStore } from "./sqlPublicationStore.js";
import { SqlSessionNameStore } from "./sqlSessionNameStore.js";
import { SqlSessionResourceStore } from "./sqlSessionResourceStore.js";
import { SqlSessionStore } from "./sqlSessionStore.js";
import { SqlSkillStore } from "./sqlSkillStore.js";
import { SqlSubjectErasure } from "./sqlSubjectErasure.js";
import { SqlTunnelStore } from "./sqlTunnelStore.js";
import { SqlUserProfileStore } from "./sqlUserProfileStore.js";
import { SqlVaultStore } from "./sqlVaultStore.js";
import { SqlWorkQueueStore } from "./sqlWorkQueueStore.js";

/** Role-narrowed bundles: each role receives the ports it owns, never the database handle. */
export function controlStores(db: Db, dialect: SqlDialect = "sqlite"): ControlStores {
  return {
    publications: new SqlPublicationStore(db),
    iam: new SqlIamStore(db),
    vaults: new SqlVaultStore(db),
    credentials: new SqlCredentialStore(db),
    credentialOpens: new SqlCredentialOpenAudit(db),
    adminAudit: new SqlAdminAudit(db),
    consents: new SqlConsentStore(db),
    userProfiles: new SqlUserProfileStore(db, dialect),
  };
}

/**
 * The coordinator's stores both backends share; the hot writers (ledger, dispatch) are each
 * backend's own executor (`sqliteCoordinatorStores`, `postgresCoordinatorStores`). `dialect` tells
 * the shared writers that decide under concurrency which locks to take.
 */
export function coordinatorStores(
  db: Db,
  _clock: Clock,
  dialect: SqlDialect = "sqlite",
): Omit<CoordinatorStores, "ledger" | "dispatch"> {
  return {
    catalog: new SqlCatalogStore(db),
    environments: new SqlEnvironmentStore(db),
    sessions: new SqlSessionStore(db),
    history: new SqlHistoryReader(db),
    workQueue: new SqlWorkQueueStore(db, dialect),
    environmentKeys: new SqlEnvironmentKeyStore(db),
    sessionNames: new SqlSessionNameStore(db),
    erasure: new SqlSubjectErasure(db, dialect),
    tunnels: new SqlTunnelStore(db, dialect),
    imageBuilds: new SqlImageBuildStore(db),
  };
}

/** The Resources context's stores: each family its own, never one generic table. */
export function resourceStores(db: Db, dialect: SqlDialect = "sqlite"): ResourceStores {
  return {
    files: new SqlFileStore(db, dialect),
    skills: new SqlSkillStore(db, dialect),
    memory: new SqlMemoryStore(db, dialect),
    sessionResources: new SqlSessionResourceStore(db, dialect),
  };
}
