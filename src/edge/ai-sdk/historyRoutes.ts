import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { AwakenError, notFound } from "../../kernel/errors.js";
import { principalOf } from "../http/auth.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { servicesFor } from "../http/scopedServices.js";
import { describeIssues } from "./chatRequest.js";
import { historyMessages } from "./historyMessages.js";
import { readHistory } from "./sessionHistory.js";

const querySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** Where the previous page began (messages before it come next), as this route returned it. */
  cursor: z
    .string()
    .regex(/^\d{1,9}$/, "must be a cursor this route returned")
    .optional(),
});

/**
 * `GET /v1/ai-sdk/threads/:sessionId/messages`: the chat as UI messages rebuilt from committed
 * facts, newest page first; `cursor` pages back to older messages (null: this is the oldest).
 */
export function historyRoutes(app: FastifyInstance, shared: EdgeServices): void {
  app.get<{ Params: { sessionId: string } }>("/v1/ai-sdk/threads/:sessionId/messages", async (request) => {
    const services = servicesFor(shared, request);
    const parsed = querySchema.safeParse(request.query ?? {});
    if (!parsed.success) {
      throw new AwakenError("invalid_request", `Invalid query: ${describeIssues(parsed.error.issues)}`);
    }
    const { limit, cursor } = parsed.data;
    const workspaceId = principalOf(request).workspaceId;
    const session = await services.entry.findNamed(workspaceId, request.params.sessionId);
    if (!session) throw notFound("session", request.params.sessionId);
    const messages = historyMessages(await readHistory(services, session), session.id);
    const end = cursor === undefined ? messages.length : Math.min(Number(cursor), messages.length);
    const start = Math.max(0, end - limit);
    return { items: messages.slice(start, end), cursor: start > 0 ? String(start) : null };
  });
}
