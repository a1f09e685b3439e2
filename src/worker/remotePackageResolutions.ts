import { PlatformError } from "../kernel/errors.js";
import type { PackageResolution } from "../kernel/packageResolution.js";
import type { PackageResolutionPort, PackageResolutionRequest } from "../runtime/ports.js";
import type { WorkerRequest, WorkerResponse } from "./transportWire.js";

/** What this port needs of the transport (`HttpWorkerTransport.packageResolution`). */
export interface PackageResolutionTransport {
  packageResolution(
    request: WorkerRequest<"packageResolution">,
  ): Promise<WorkerResponse<"packageResolution">>;
}

/** The coordinator found the claim the request named not live: nothing was read or recorded. */
export class PackageResolutionClaimLost extends PlatformError {
  constructor(runId: string, reason: string) {
    super("claim_lost", `package resolution not reached for run ${runId}: the claim is lost (${reason})`);
    this.name = "PackageResolutionClaimLost";
  }
}

/**
 * The runtime's `packageResolutions` port on a remote worker: the revision's frozen resolution is
 * the Coordinator's record, reached over the worker transport under the run's claim, never with
 * database access. The worker's preparer checks whatever comes back before it installs it.
 */
export class RemotePackageResolutions implements PackageResolutionPort {
  constructor(private readonly transport: PackageResolutionTransport) {}

  recorded(request: PackageResolutionRequest): Promise<PackageResolution | null> {
    return this.call(request, null);
  }

  async record(request: PackageResolutionRequest, resolution: PackageResolution): Promise<PackageResolution> {
    const recorded = await this.call(request, resolution);
    if (recorded === null) throw new Error("the coordinator recorded no package resolution");
    return recorded;
  }

  private async call(
    request: PackageResolutionRequest,
    resolution: PackageResolution | null,
  ): Promise<PackageResolution | null> {
    const answer = await this.transport.packageResolution({ ...request, resolution });
    if (answer.kind === "claim_lost") throw new PackageResolutionClaimLost(request.runId, answer.reason);
    return answer.resolution;
  }
}
