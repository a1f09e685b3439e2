import type { Migration, MigrationProvider } from "kysely/migration";
import { initial } from "./001_initial.js";
import { selfHostedWork } from "./002_self_hosted_work.js";
import { vaults } from "./003_vaults.js";
import { credentialPins } from "./004_credential_pins.js";
import { commitAppendFunction } from "./005_commit_append_function.js";
import { setBasedCommitAppend } from "./006_set_based_commit_append.js";
import { progressAwareCrashReset } from "./007_progress_aware_crash_reset.js";
import { installationFacts } from "./008_installation_facts.js";
import { sendReceiptBodyHash } from "./009_send_receipt_body_hash.js";
import { sessionNames } from "./010_session_names.js";
import { runTraceContext } from "./011_run_trace_context.js";
import { commitAppendNotify } from "./012_commit_append_notify.js";
import { pushOutbox } from "./013_push_outbox.js";
import { inputAppendFunction } from "./015_input_append_function.js";
import { apiKeyRoles } from "./016_api_key_roles.js";
import { credentialOpensByWorkspace } from "./017_credential_opens_by_workspace.js";
import { apiKeyAgents } from "./018_api_key_agents.js";
import { adminAudit } from "./019_admin_audit.js";
import { apiKeyHashScheme } from "./020_api_key_hash_scheme.js";
import { dataSubjects } from "./021_data_subjects.js";
import { publicationRegistration } from "./022_publication_registration.js";
import { blobs } from "./023_blobs.js";
import { files } from "./024_files.js";
import { skills } from "./025_skills.js";
import { memoryStores } from "./026_memory_stores.js";
import { sessionResources } from "./027_session_resources.js";
import { commitRows } from "./028_commit_rows.js";
import { threadLineage } from "./029_thread_lineage.js";
import { userProfiles } from "./030_user_profiles.js";
import { deployments } from "./031_deployments.js";
import { webhooks } from "./032_webhooks.js";
import { dreams } from "./033_dreams.js";
import { tunnels } from "./034_tunnels.js";
import { packageResolutions } from "./035_package_resolutions.js";
import { imageBuilds } from "./036_image_builds.js";

// Migrations are code (not files read at run time) so the compiled package carries them.
const MIGRATIONS: Record<string, Migration> = {
  "001_initial": initial,
  "002_self_hosted_work": selfHostedWork,
  "003_vaults": vaults,
  "004_credential_pins": credentialPins,
  "005_commit_append_function": commitAppendFunction,
  "006_set_based_commit_append": setBasedCommitAppend,
  "007_progress_aware_crash_reset": progressAwareCrashReset,
  "008_installation_facts": installationFacts,
  "009_send_receipt_body_hash": sendReceiptBodyHash,
  "010_session_names": sessionNames,
  "011_run_trace_context": runTraceContext,
  "012_commit_append_notify": commitAppendNotify,
  "013_push_outbox": pushOutbox,
  "015_input_append_function": inputAppendFunction,
  "016_api_key_roles": apiKeyRoles,
  "017_credential_opens_by_workspace": credentialOpensByWorkspace,
  "018_api_key_agents": apiKeyAgents,
  "019_admin_audit": adminAudit,
  "020_api_key_hash_scheme": apiKeyHashScheme,
  "021_data_subjects": dataSubjects,
  "022_publication_registration": publicationRegistration,
  "023_blobs": blobs,
  "024_files": files,
  "025_skills": skills,
  "026_memory_stores": memoryStores,
  "027_session_resources": sessionResources,
  "028_commit_rows": commitRows,
  "029_thread_lineage": threadLineage,
  "031_deployments": deployments,
  "030_user_profiles": userProfiles,
  "033_dreams": dreams,
  "034_tunnels": tunnels,
  "035_package_resolutions": packageResolutions,
  "032_webhooks": webhooks,
  "036_image_builds": imageBuilds,
};

/** Every migration this build knows, in the order they apply (readiness compares a database's). */
export const KNOWN_MIGRATIONS: readonly string[] = Object.keys(MIGRATIONS).sort();

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
