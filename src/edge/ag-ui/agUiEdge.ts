import type { EdgeAdapter } from "../http/edgeAdapter.js";
import { servicesFor } from "../http/scopedServices.js";
import { answerAgUiError } from "./agUiErrors.js";
import { agUiRoutes } from "./agUiRoute.js";
import { agUiPortsOf } from "./agUiServicePorts.js";

/** The AG-UI protocol (what `@ag-ui/client`'s HttpAgent speaks): one run per POST, SSE back. */
export const agUiEdge: EdgeAdapter = {
  name: "ag-ui",
  pathPrefixes: ["/v1/ag-ui/"],
  register(app, services) {
    agUiRoutes(app, (request) => agUiPortsOf(servicesFor(services, request)), services);
  },
  answerError: answerAgUiError,
};
