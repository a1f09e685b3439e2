import type { FastifyInstance } from "fastify";
import type { ManagedAgentsDeps } from "../edgeDeps.js";

export function skillRoutes(_app: FastifyInstance, _deps: ManagedAgentsDeps): void {}
