import { useApi } from "../api/apiContext.js";
import { usePendingApprovals } from "../hooks/usePendingApprovals.js";
import { useSessionHints } from "../hooks/useSessionHints.js";
import { Link, useNavigation } from "../router.js";
import { AgentPage } from "./AgentPage.js";
import { AgentsPage } from "./AgentsPage.js";
import { ApiKeysPage } from "./ApiKeysPage.js";
import { ApprovalsPage } from "./ApprovalsPage.js";
import { AuditPage } from "./AuditPage.js";
import { BuildsPage } from "./BuildsPage.js";
import { CredentialPage } from "./CredentialPage.js";
import { CustodyAudit } from "./CustodyAudit.js";
import { DeploymentPage } from "./DeploymentPage.js";
import { DeploymentsPage } from "./DeploymentsPage.js";
import { EnvironmentKeysPage } from "./EnvironmentKeysPage.js";
import { EnvironmentPage } from "./EnvironmentPage.js";
import { EnvironmentsPage } from "./EnvironmentsPage.js";
import { FilesPage } from "./FilesPage.js";
import { MemoryStorePage } from "./MemoryStorePage.js";
import { MemoryStoresPage } from "./MemoryStoresPage.js";
import { OverviewPage } from "./OverviewPage.js";
import { SessionPage } from "./SessionPage.js";
import { SessionsPage } from "./SessionsPage.js";
import { SkillPage } from "./SkillPage.js";
import { SkillsPage } from "./SkillsPage.js";
import { VaultPage } from "./VaultPage.js";
import { VaultsPage } from "./VaultsPage.js";
import { WebhooksPage } from "./WebhooksPage.js";
import { WorkersPage } from "./WorkersPage.js";

export function Layout() {
  const { signOut } = useApi();
  const { route } = useNavigation();
  useSessionHints();
  const approvals = usePendingApprovals();
  const waiting = approvals.data?.length ?? 0;
  return (
    <>
      <header className="top">
        <strong className="brand">Awaken Console</strong>
        <nav aria-label="Console">
          <Link to="overview">Overview</Link>
          <Link to="sessions">Sessions</Link>
          <Link to="approvals">Approvals{waiting > 0 ? ` (${waiting})` : ""}</Link>
          <Link to="agents">Agents</Link>
          <Link to="deployments">Deployments</Link>
          <Link to="environments">Environments</Link>
          <Link to="builds">Builds</Link>
          <Link to="vaults">Vaults</Link>
          <Link to="files">Files</Link>
          <Link to="skills">Skills</Link>
          <Link to="memory-stores">Memory</Link>
          <Link to="custody">Custody</Link>
          <Link to="environment-keys">Keys</Link>
          <Link to="workers">Workers</Link>
          <Link to="audit">Audit</Link>
          <Link to="api-keys">API keys</Link>
          <Link to="webhooks">Webhooks</Link>
        </nav>
        <button type="button" className="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {route.page === "overview" && <OverviewPage />}
        {route.page === "sessions" && <SessionsPage />}
        {route.page === "session" && (
          <SessionPage key={route.sessionId} sessionId={route.sessionId} threadId={route.threadId ?? null} />
        )}
        {route.page === "approvals" && <ApprovalsPage />}
        {route.page === "agents" && <AgentsPage />}
        {route.page === "agent" && <AgentPage key={route.agentId} agentId={route.agentId} />}
        {route.page === "environments" && <EnvironmentsPage />}
        {route.page === "environment" && (
          <EnvironmentPage key={route.environmentId} environmentId={route.environmentId} />
        )}
        {route.page === "builds" && <BuildsPage key={route.buildId ?? ""} buildId={route.buildId ?? null} />}
        {route.page === "vault" && <VaultPage key={route.vaultId} vaultId={route.vaultId} />}
        {route.page === "vaults" && <VaultsPage />}
        {route.page === "credential" && (
          <CredentialPage
            key={`${route.vaultId}/${route.credentialId}`}
            vaultId={route.vaultId}
            credentialId={route.credentialId}
          />
        )}
        {route.page === "files" && <FilesPage />}
        {route.page === "skills" && <SkillsPage />}
        {route.page === "skill" && (
          <SkillPage key={route.skillId} skillId={route.skillId} versionId={route.versionId} />
        )}
        {route.page === "memory-stores" && <MemoryStoresPage />}
        {route.page === "memory-store" && (
          <MemoryStorePage key={route.storeId} storeId={route.storeId} memoryId={route.memoryId} />
        )}
        {route.page === "deployments" && <DeploymentsPage />}
        {route.page === "deployment" && (
          <DeploymentPage key={route.deploymentId} deploymentId={route.deploymentId} />
        )}
        {route.page === "custody" && <CustodyAudit headingLevel={1} />}
        {route.page === "environment-keys" && <EnvironmentKeysPage />}
        {route.page === "workers" && <WorkersPage />}
        {route.page === "audit" && <AuditPage />}
        {route.page === "api-keys" && <ApiKeysPage />}
        {route.page === "webhooks" && <WebhooksPage />}
        {route.page === "not_found" && (
          <p role="alert">
            Nothing at “{route.path}”. <Link to="sessions">Back to sessions</Link>
          </p>
        )}
      </main>
    </>
  );
}
