import type { FastifyInstance } from "fastify";
import type { ManagedAgentsDeps } from "../edgeDeps.js";

export function fileRoutes(_app: FastifyInstance, _deps: ManagedAgentsDeps): void {}
