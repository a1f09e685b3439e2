import type { FastifyInstance } from "fastify";
import type { ManagedAgentsDeps } from "../edgeDeps.js";

export function memoryStoreRoutes(_app: FastifyInstance, _deps: ManagedAgentsDeps): void {}
