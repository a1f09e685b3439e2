import type { Clock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import type {
  CatalogStore,
  ExecutableAgentRegistrar,
  ExecutableAgentSnapshot,
  RegistrationReceipt,
} from "./ports.js";

/**
 * The in-process registrar used by the all-in-one server. A split deployment swaps in an HTTP
 * client implementing the same port; the rule stays here: same identity and fingerprint converge,
 * same identity with another fingerprint fails closed.
 */
export class LocalRegistrar implements ExecutableAgentRegistrar {
  constructor(
    private readonly catalog: CatalogStore,
    private readonly clock: Clock,
  ) {}

  async register(snapshot: ExecutableAgentSnapshot): Promise<RegistrationReceipt> {
    const receipt = await this.catalog.putIfAbsent(snapshot, this.clock.now());
    if (receipt.fingerprint !== snapshot.fingerprint) {
      throw new AwakenError(
        "publication_conflict",
        `agent ${snapshot.agentId} version ${snapshot.version} is already registered with another fingerprint; ` +
          "a published version can never change",
        { retryable: false },
      );
    }
    return receipt;
  }
}
