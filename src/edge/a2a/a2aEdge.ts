import type { EdgeAdapter } from "../http/edgeAdapter.js";
import { servicesFor } from "../http/scopedServices.js";
import { answerA2aError } from "./a2aErrors.js";
import { a2aRoutes } from "./a2aRoutes.js";
import { a2aPortsOf } from "./a2aServicePorts.js";

/** The A2A protocol (what `@a2a-js/sdk`'s client speaks): a card and a JSON-RPC interface per agent. */
export const a2aEdge: EdgeAdapter = {
  name: "a2a",
  pathPrefixes: ["/v1/a2a/"],
  register(app, services) {
    a2aRoutes(app, (request) => a2aPortsOf(servicesFor(services, request)));
  },
  answerError: answerA2aError,
};
