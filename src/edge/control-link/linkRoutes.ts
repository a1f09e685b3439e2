import type { FastifyInstance } from "fastify";
import { AwakenError } from "../../kernel/errors.js";
import { bearerTokenCheck } from "../http/bearerToken.js";
import { CATEGORY_STATUS } from "../http/edgeFailure.js";
import { decodeArgs, encodeError, encodeResult } from "./linkCodec.js";
import { LINK_ROUTE_PREFIX, type LinkServices } from "./linkServices.js";

export interface LinkRouteDeps {
  /** AWAKEN_CONTROL_TOKEN: the only credential these routes accept (never an API key). */
  token: string;
  /** What this side serves, method by method; nothing else is callable. */
  services: LinkServices;
}

/**
 * The private Control↔Coordinator link: `POST <prefix>/<service>/<method>` with the argument list,
 * answered with the result or the AwakenError it threw (same code, message and details, so the
 * public edge answers a forwarded call exactly as it would a local one). Register in its own
 * Fastify scope: the token hook must not touch any public route.
 */
export function linkRoutes(app: FastifyInstance, deps: LinkRouteDeps): void {
  const tokenMatches = bearerTokenCheck(deps.token);
  // A callback hook: an async one costs a promise and a microtask hop on every call.
  app.addHook("onRequest", (request, _reply, done) => {
    if (tokenMatches(request.headers.authorization)) done();
    else done(new AwakenError("unauthenticated", "Invalid or missing control token (AWAKEN_CONTROL_TOKEN)."));
  });
  app.setErrorHandler((error, request, reply) => {
    const known = error instanceof AwakenError ? error : null;
    if (!known) request.log.error({ err: error, url: request.url }, "control link call failed");
    const answer =
      known ??
      new AwakenError("internal", "The call failed on the peer; its log has the cause.", { retryable: true });
    void reply
      .status(CATEGORY_STATUS[answer.category])
      .header("content-type", "application/json")
      .send(JSON.stringify(encodeError(answer)));
  });
  app.post<{ Params: { service: string; method: string } }>(
    `${LINK_ROUTE_PREFIX}/:service/:method`,
    async (request, reply) => {
      const { service, method } = request.params;
      // Own entries only: a name like `__proto__` is no service.
      const target = Object.hasOwn(deps.services, service) ? deps.services[service] : undefined;
      const call = target?.methods.includes(method) ? target.impl[method] : undefined;
      if (typeof call !== "function") {
        throw new AwakenError("not_found", `The link serves no ${service}.${method}.`);
      }
      const result: unknown = await call.apply(target!.impl, decodeArgs(request.body));
      void reply.header("content-type", "application/json");
      return encodeResult(result);
    },
  );
}
