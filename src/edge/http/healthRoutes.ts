import type { FastifyInstance } from "fastify";

/** `GET /healthz` answers 200 once the server accepts work; no authentication. */
export function healthRoutes(app: FastifyInstance, isReady: () => boolean): void {
  app.get("/healthz", async (_request, reply) => {
    if (!isReady()) return reply.status(503).send({ status: "starting" });
    return { status: "ok" };
  });
}
