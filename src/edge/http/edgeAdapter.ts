import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ApiKeyRole } from "../../control/apiKeyRoles.js";
import type { AuthPrincipal } from "./auth.js";
import type { EdgeFailure } from "./edgeFailure.js";
import type { EdgeServices } from "./edgeServices.js";

/**
 * One client protocol. The server gives each adapter its own scope: requests arrive authenticated
 * (the route's `config.access` says by what), and every failure in the scope — a thrown
 * AwakenError, a bad body, an unknown method under its prefix — is answered by `answerError` in
 * the protocol's own shape. Adapters call application services only; they keep no history.
 */
export interface EdgeAdapter<S = EdgeServices> {
  /** The folder under src/edge, for logs. */
  name: string;
  /** Paths this adapter owns (`/v1/ai-sdk/`); unmatched requests under it get its error shape. */
  pathPrefixes: readonly string[];
  register(app: FastifyInstance, services: S): void;
  /**
   * The protocol's own authentication scheme, when it has one (a bearer token a peer agent holds,
   * say); absent, the workspace API key (`authenticate` in `auth.ts`). Routes still declare the
   * principals they accept with `config.access`.
   */
  authenticate?(services: S, request: FastifyRequest): Promise<AuthPrincipal>;
  /**
   * The least API-key role the matched route needs (`control/apiKeyRoles.ts`); absent, `runtime`:
   * a protocol edge runs sessions, which every role may.
   */
  roleFor?(request: FastifyRequest): ApiKeyRole;
  answerError(failure: EdgeFailure, request: FastifyRequest, reply: FastifyReply): void;
}
